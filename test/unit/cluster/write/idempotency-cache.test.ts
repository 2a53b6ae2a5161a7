// IdempotencyCache (write/idempotency-cache.ts) with the node's limits (IDEMPOTENCY_LIMITS: 10
// minutes, 10,000 results): a result is remembered per (key, Idempotency-Key) until its TTL has
// passed, and past the count cap the oldest is forgotten first.
import { expect } from "chai";
import { IDEMPOTENCY_LIMITS } from "../../../../src/core/limits.js";
import type { WriteResult } from "../../../../src/cluster/index.js";
import { IdempotencyCache } from "../../../../src/cluster/write/idempotency-cache.js";
import { ManualClock } from "../../../helpers/manual-clock.js";
import type { CacheError } from "../../../../src/core/errors.js";

const OWNERS = Object.freeze({ ids: ["n1"], primary: "n1", header: "n1", json: '["n1"]' });

/** A request under `idemKey` that asks what `fingerprint` says. */
const req = (idemKey: string, fingerprint = "f") => ({ idemKey, fingerprint });

function result(counterValue: number): WriteResult {
  return { key: "k", applied: true, bytes: 1, owners: OWNERS, version: counterValue, origin: "n1", expiresAtMs: 0, counterValue, appliedBy: "n1" };
}

describe("cluster/write/idempotency-cache", () => {
  it("the node's limits are 10 minutes and 10,000 results", () => {
    expect(IDEMPOTENCY_LIMITS).to.deep.equal({ ttlMs: 600_000, entriesMax: 10_000 });
  });

  it("remembers a result per key and Idempotency-Key until 10 minutes have passed, then forgets it", () => {
    const clock = new ManualClock();
    const cache = new IdempotencyCache({ clock, limits: IDEMPOTENCY_LIMITS });
    cache.remember("k", req("id-1"), result(1));
    expect(cache.get("k", req("id-1"))?.counterValue).to.equal(1);
    expect(cache.get("k", req("id-2"))).to.equal(undefined);
    expect(cache.get("other", req("id-1"))).to.equal(undefined);
    clock.advance(IDEMPOTENCY_LIMITS.ttlMs - 1);
    expect(cache.get("k", req("id-1"))?.counterValue).to.equal(1);
    clock.advance(1);
    expect(cache.get("k", req("id-1"))).to.equal(undefined);
    expect(cache.size).to.equal(0);
  });

  it("keys and Idempotency-Keys that join to the same text stay apart", () => {
    const cache = new IdempotencyCache({ clock: new ManualClock(), limits: IDEMPOTENCY_LIMITS });
    cache.remember("b:c", req("a"), result(1));
    cache.remember("c", req("a:b"), result(2));
    expect(cache.get("b:c", req("a"))?.counterValue).to.equal(1);
    expect(cache.get("c", req("a:b"))?.counterValue).to.equal(2);
  });

  it("holds at most 10,000 results: the 10,001st forgets the oldest, and only it", () => {
    const clock = new ManualClock();
    const cache = new IdempotencyCache({ clock, limits: IDEMPOTENCY_LIMITS });
    for (let i = 0; i < IDEMPOTENCY_LIMITS.entriesMax; i++) cache.remember(`k${i}`, req("id"), result(i));
    expect(cache.size).to.equal(IDEMPOTENCY_LIMITS.entriesMax);
    cache.remember("new", req("id"), result(-1));
    expect(cache.size).to.equal(IDEMPOTENCY_LIMITS.entriesMax);
    expect(cache.get("k0", req("id"))).to.equal(undefined);
    expect(cache.get("k1", req("id"))?.counterValue).to.equal(1);
    expect(cache.get("new", req("id"))?.counterValue).to.equal(-1);
  });

  it("remembering the same key and Idempotency-Key again replaces the result and restarts its 10 minutes", () => {
    const clock = new ManualClock();
    const cache = new IdempotencyCache({ clock, limits: IDEMPOTENCY_LIMITS });
    cache.remember("k", req("id"), result(1));
    clock.advance(300_000);
    cache.remember("k", req("id"), result(2));
    expect(cache.size).to.equal(1);
    clock.advance(IDEMPOTENCY_LIMITS.ttlMs - 1);
    expect(cache.get("k", req("id"))?.counterValue).to.equal(2);
  });

  it("an increment added but not acknowledged is remembered as added (its value), not as a result, until the result replaces it or it expires", () => {
    const clock = new ManualClock();
    const cache = new IdempotencyCache({ clock, limits: IDEMPOTENCY_LIMITS });
    cache.rememberAdded("k", req("id"), 7);
    expect(cache.get("k", req("id")), "no answer to give yet").to.equal(undefined);
    expect(cache.addedValue("k", req("id"))).to.equal(7);
    expect(cache.addedValue("k", req("other"))).to.equal(undefined);
    cache.remember("k", req("id"), result(7));
    expect(cache.addedValue("k", req("id")), "acknowledged now").to.equal(undefined);
    expect(cache.get("k", req("id"))?.counterValue).to.equal(7);
    cache.rememberAdded("k2", req("id"), 3);
    clock.advance(IDEMPOTENCY_LIMITS.ttlMs);
    expect(cache.addedValue("k2", req("id"))).to.equal(undefined);
  });
  it("the same Idempotency-Key with another request on the same key is 409 CONFLICT (it answered the first result, and the second request was lost); on another key it is another entry", () => {
    const cache = new IdempotencyCache({ clock: new ManualClock(), limits: IDEMPOTENCY_LIMITS });
    cache.remember("k", req("id-1", "+1"), result(1));
    expect(cache.get("k", req("id-1", "+1"))?.counterValue).to.equal(1);
    for (const read of [() => cache.get("k", req("id-1", "+100")), () => cache.addedValue("k", req("id-1", "+100"))]) {
      const err = (() => {
        try {
          read();
        } catch (e) {
          return e as CacheError;
        }
        return undefined;
      })();
      expect(err?.code).to.equal("CONFLICT");
      expect(err?.details).to.deep.equal({ reason: "idempotency_key_reused" });
    }
    expect(cache.get("other", req("id-1", "+100")), "another key").to.equal(undefined);
  });
});
