// When a replica owner takes a write over after its forward to the primary failed
// (promotion.ts): a plain write on any 5xx, an increment only when the primary cannot have added
// it (the forward never left, or the primary refused it before adding).
import { expect } from "chai";
import { CacheError } from "../../../../src/core/errors.js";
import { afterForwardFailure, primaryFailure, type ForwardDelivery } from "../../../../src/cluster/write/promotion.js";
import type { WriteOutcome } from "../../../../src/transport/index.js";

const timeout = new CacheError("UNAVAILABLE", "peer call timed out after 5000 ms");
const draining = new CacheError("DRAINING", "node is draining");
const afterAdd = new CacheError("QUORUM_FAILED", "1 of 2", { acknowledged: ["n1"] });

function decide(failure: CacheError, delivery: ForwardDelivery, increment: boolean, ownsKey = true) {
  return afterForwardFailure({ failure, delivery }, ownsKey, increment);
}

describe("cluster/write/promotion afterForwardFailure", () => {
  it("an increment whose forward may have reached the primary (a timeout, a lost connection) is not taken over", () => {
    expect(decide(timeout, "maybe", true)).to.equal("fail");
  });

  it("an increment whose forward never left this node is taken over", () => {
    expect(decide(timeout, "never", true)).to.equal("promote");
  });

  it("an increment the primary refused before adding is taken over; one it failed after adding is not", () => {
    expect(decide(draining, "answered", true)).to.equal("promote");
    expect(decide(afterAdd, "answered", true)).to.equal("fail");
  });

  it("a plain write is taken over after any 5xx, however far its forward got (SPEC: ANY error)", () => {
    for (const d of ["maybe", "never", "answered"] as const) {
      expect(decide(timeout, d, false), d).to.equal("promote");
      expect(decide(afterAdd, d, false), d).to.equal("promote");
    }
  });

  it("a node that does not own the key, or a 4xx, never takes the write over", () => {
    expect(decide(timeout, "never", false, false)).to.equal("fail");
    expect(decide(new CacheError("BAD_REQUEST", "bad"), "answered", false)).to.equal("fail");
  });

  describe("primaryFailure: the primary's answer passed on", () => {
    const failed = (over: Partial<WriteOutcome>): WriteOutcome => ({ key: "k", applied: false, bytes: 0, owners: ["n1"], version: 0, origin: "", errorCode: "UNAVAILABLE", errorMessage: "over budget", expiresAtMs: 0, ...over });

    it("keeps the Retry-After a store over its byte budget names in its details (a write through another node lost it)", () => {
      const e = primaryFailure(failed({ errorDetails: { reason: "store_over_budget", data_bytes: 10, max_data_bytes: 8, retry_after_s: 1 } }));
      expect([e.code, e.status, e.retryAfterS, e.details?.reason]).to.deep.equal(["UNAVAILABLE", 503, 1, "store_over_budget"]);
    });

    it("no Retry-After without a sane retry_after_s; an unknown code is INTERNAL; a precondition failure's ETag from its own field", () => {
      for (const retry of [undefined, 0, -1, 1.5, "1", 99_999]) expect(primaryFailure(failed({ errorDetails: { retry_after_s: retry } })).retryAfterS, String(retry)).to.equal(undefined);
      expect(primaryFailure(failed({ errorCode: "NOPE" })).code).to.equal("INTERNAL");
      expect(primaryFailure(failed({ errorCode: "PRECONDITION_FAILED", currentEtag: '"abc"' })).details).to.deep.equal({ current_etag: '"abc"' });
    });
  });
});
