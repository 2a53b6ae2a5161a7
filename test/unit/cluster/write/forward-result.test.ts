import { expect } from "chai";
import { senderCounts } from "../../../../src/cluster/write/conditional-writer.js";
import { holdsResultOrLater, resultRecord, stampedRecord, withSenderView } from "../../../../src/cluster/write/forward-result.js";
import { HashRing } from "../../../../src/ring/index.js";
import { headerOf, type VersionedRecord } from "../../../../src/store/index.js";
import type { ClientWrite, WriteOutcome } from "../../../../src/transport/index.js";

const NOW = 1_767_225_600_000;
const owners = HashRing.build(["n1", "n2", "n3"], 3).ownersOf("k");
const reversed = [...owners.ids].reverse();
const item: VersionedRecord = { key: "k", value: "old", version: NOW * 1000, origin: "n2", lastUpdatedMs: NOW, expiresAtMs: NOW + 5_000, tombstone: false };
const outcome: WriteOutcome = { key: "k", applied: true, bytes: 3, owners: owners.ids, version: (NOW + 10) * 1000 + 3, origin: "n2", errorCode: "", errorMessage: "", expiresAtMs: NOW + 60_010, senderCounted: true };
const set: ClientWrite = { kind: "set", key: "k", value: "new", ttlMs: 60_000, condition: { ifMatch: "*" } };
const touch: ClientWrite = { kind: "touch", key: "k", value: "", ttlMs: 60_000 };

describe("cluster/write/forward-result and senderCounts", () => {
  it("withSenderView sends the owner list, and for a touch the value it holds (none for a tombstone or nothing held)", () => {
    expect(withSenderView(set, owners, item).sender).to.deep.equal({ owners: owners.ids, baseVersion: 0, baseOrigin: "" });
    expect(withSenderView(touch, owners, item).sender).to.deep.equal({ owners: owners.ids, baseVersion: item.version, baseOrigin: "n2" });
    expect(withSenderView(touch, owners, { ...headerOf(item), tombstone: true }).sender).to.include({ baseVersion: 0, baseOrigin: "" });
    expect(withSenderView(touch, owners, undefined).sender).to.include({ baseVersion: 0 });
  });

  const counts: Array<[string, ClientWrite, VersionedRecord | undefined, boolean]> = [
    ["set with the same owner list", withSenderView(set, owners, undefined), item, true],
    ["set with no view (an older sender)", set, item, false],
    ["set with the owners in another order", { ...set, sender: { owners: reversed, baseVersion: 0, baseOrigin: "" } }, item, false],
    ["set with one owner fewer", { ...set, sender: { owners: owners.ids.slice(0, 2), baseVersion: 0, baseOrigin: "" } }, item, false],
    ["touch holding the item touched", withSenderView(touch, owners, item), item, true],
    ["touch holding an older version", withSenderView(touch, owners, { ...item, version: item.version - 1 }), item, false],
    ["touch holding the version from another origin", withSenderView(touch, owners, { ...item, origin: "n3" }), item, false],
    ["touch holding nothing", withSenderView(touch, owners, undefined), item, false],
    ["touch, the primary has no live item", withSenderView(touch, owners, item), undefined, false],
  ];
  for (const [name, write, live, want] of counts) {
    it(`senderCounts: ${name} → ${want}`, () => expect(senderCounts(write, owners, live)).to.equal(want));
  }

  it("resultRecord: a set or remove as stamped; a touch on the item held when forwarded, else none", () => {
    expect(resultRecord(set, outcome, item)).to.deep.equal(stampedRecord(set, outcome));
    expect(stampedRecord(set, outcome)).to.deep.equal({ key: "k", value: "new", version: outcome.version, origin: "n2", lastUpdatedMs: NOW + 10, expiresAtMs: NOW + 60_010, tombstone: false });
    expect(stampedRecord({ kind: "remove", key: "k", value: "", ttlMs: 0 }, outcome)).to.include({ tombstone: true, value: "", expiresAtMs: 0 });
    const sent = withSenderView(touch, owners, item);
    expect(resultRecord(sent, outcome, item)).to.deep.equal({ key: "k", value: "old", version: outcome.version, origin: "n2", lastUpdatedMs: NOW + 10, expiresAtMs: NOW + 60_010, tombstone: false });
    expect(resultRecord(sent, outcome, { ...item, version: item.version + 1 }), "replaced since").to.equal(undefined);
    expect(resultRecord(sent, outcome, undefined), "gone since").to.equal(undefined);
    expect(resultRecord(touch, outcome, item), "sent without a view").to.equal(undefined);
  });

  it("holdsResultOrLater: the result itself or a later write of the same coordinator, nothing else", () => {
    expect(holdsResultOrLater({ ...item, version: outcome.version }, outcome)).to.equal(true);
    expect(holdsResultOrLater({ ...item, version: outcome.version + 1 }, outcome)).to.equal(true);
    expect(holdsResultOrLater({ ...item, version: outcome.version + 1, origin: "n3" }, outcome)).to.equal(false);
    expect(holdsResultOrLater({ ...item, version: outcome.version - 1 }, outcome)).to.equal(false);
    expect(holdsResultOrLater(undefined, outcome)).to.equal(false);
  });
});
