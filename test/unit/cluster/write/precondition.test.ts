import { expect } from "chai";
import { CacheError } from "../../../../src/core/errors.js";
import { etagOf } from "../../../../src/core/etag.js";
import { effectiveWrite, evaluatePrecondition, preconditionFailed } from "../../../../src/cluster/write/precondition.js";
import { isLiveAt, type VersionedRecord } from "../../../../src/store/index.js";
import type { WriteCondition } from "../../../../src/transport/index.js";

const NOW = 1_767_225_600_000;
const item: VersionedRecord = { key: "k", value: "v", version: NOW * 1000, origin: "n1", lastUpdatedMs: NOW, expiresAtMs: 0, tombstone: false };
const tag = etagOf(item.version, item.origin);
const other = etagOf(item.version - 1, item.origin);

describe("cluster/write/precondition", () => {
  it("isLiveAt (store/record.ts), the one live check: tombstones and expired values are no item; expiry 0 never expires", () => {
    expect(isLiveAt(item, NOW)).to.equal(true);
    expect(isLiveAt(undefined, NOW)).to.equal(false);
    expect(isLiveAt({ ...item, tombstone: true, value: "" }, NOW)).to.equal(false);
    expect(isLiveAt({ ...item, expiresAtMs: NOW }, NOW)).to.equal(false);
    expect(isLiveAt({ ...item, expiresAtMs: NOW + 1 }, NOW)).to.equal(true);
  });

  const table: Array<[string, WriteCondition | undefined, VersionedRecord | undefined, boolean, string | undefined]> = [
    ["no condition, item", undefined, item, true, undefined],
    ["no condition, no item", undefined, undefined, true, undefined],
    ["If-Match current", { ifMatch: [tag] }, item, true, undefined],
    ["If-Match list holding current", { ifMatch: [other, tag] }, item, true, undefined],
    ["If-Match older tag", { ifMatch: [other] }, item, false, tag],
    ["If-Match weak form of current", { ifMatch: [`W/${tag}`] }, item, false, tag],
    ["If-Match on no item", { ifMatch: [tag] }, undefined, false, undefined],
    ["If-Match * on item", { ifMatch: "*" }, item, true, undefined],
    ["If-Match * on no item", { ifMatch: "*" }, undefined, false, undefined],
    ["If-None-Match * on no item", { ifNoneMatch: "*" }, undefined, true, undefined],
    ["If-None-Match * on item", { ifNoneMatch: "*" }, item, false, tag],
  ];
  for (const [name, condition, live, holds, currentEtag] of table) {
    it(`evaluatePrecondition: ${name} → ${holds ? "holds" : `fails (current ${currentEtag ?? "none"})`}`, () => {
      const v = evaluatePrecondition(condition, live);
      expect(v.holds).to.equal(holds);
      if (!v.holds) expect(v.currentEtag).to.equal(currentEtag);
    });
  }

  it("preconditionFailed is a 412 whose details carry current_etag only when there is an item", () => {
    const withTag = preconditionFailed("k", tag);
    expect(withTag).to.include({ code: "PRECONDITION_FAILED", status: 412 });
    expect(withTag.details).to.deep.equal({ current_etag: tag });
    expect(preconditionFailed("k", undefined).details).to.deep.equal({});
  });

  it("effectiveWrite: a touch becomes a set of the live value with the new TTL (or none), and 404 without an item", () => {
    expect(effectiveWrite({ kind: "touch", key: "k", value: "", ttlMs: 5000, condition: { ifMatch: "*" } }, item)).to.deep.equal({ kind: "set", key: "k", value: "v", ttlMs: 5000 });
    expect(effectiveWrite({ kind: "touch", key: "k", value: "", ttlMs: 0, persist: true }, item)).to.deep.equal({ kind: "set", key: "k", value: "v", ttlMs: 0 });
    let caught: unknown;
    try {
      effectiveWrite({ kind: "touch", key: "k", value: "", ttlMs: 5000 }, undefined);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(CacheError).and.include({ code: "NOT_FOUND" });
  });

  it("effectiveWrite: other writes keep kind, value and TTL and lose the condition", () => {
    expect(effectiveWrite({ kind: "set", key: "k", value: "x", ttlMs: 7, condition: { ifNoneMatch: "*" } }, undefined)).to.deep.equal({ kind: "set", key: "k", value: "x", ttlMs: 7 });
    expect(effectiveWrite({ kind: "remove", key: "k", value: "", ttlMs: 0, condition: { ifMatch: [tag] } }, item)).to.deep.equal({ kind: "remove", key: "k", value: "", ttlMs: 0 });
  });
});
