// ReplicaInspector and the record descriptions behind GET /cluster/keys/{key}/replicas, with a
// ManualClock and a fake transport: the local copy read in place, peers asked in parallel, an
// owner that does not answer within the timeout (or fails) reported unreachable, divergence.
import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { INSPECT_KEYS_MAX } from "../../../src/core/limits.js";
import { copiesDiverge, ReplicaInspector, type ClusterView, type ReplicaCopy } from "../../../src/cluster/index.js";
import { describeRecords, recordMeta } from "../../../src/cluster/read/record-meta.js";
import { HashRing } from "../../../src/ring/index.js";
import { headerOf, type VersionedRecord } from "../../../src/store/index.js";
import type { PeerRef, PeerTransport, RecordMeta } from "../../../src/transport/index.js";
import { flush, ManualClock } from "../../helpers/manual-clock.js";

const NOW = Date.UTC(2026, 0, 1);
const live = (key: string, version: number, origin = "a", extra: Partial<VersionedRecord> = {}): VersionedRecord => ({
  key, value: "12345", version, origin, lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false, ...extra,
});

function meta(rec: VersionedRecord | undefined, key: string): RecordMeta {
  return recordMeta(key, rec && headerOf(rec), NOW);
}

/** A view whose ring holds self, a and b (every one an owner with replication 3). */
function view(members = ["self", "a", "b"]): ClusterView {
  const ring = HashRing.build(members, 3);
  return {
    selfId: "self",
    ring: () => ring,
    peer: (id: string) => (members.includes(id) && id !== "self" ? { id, address: `${id}:7946` } : undefined),
  } as unknown as ClusterView;
}

/** A transport whose peers answer with `answers[id]`: a record, an error to throw, or "hang". */
function transport(answers: Record<string, VersionedRecord | undefined | Error | "hang">, calls: string[] = []): PeerTransport {
  return {
    inspect: async (to: PeerRef, keys: readonly string[]) => {
      calls.push(`${to.id}:${keys.join(",")}`);
      const a = answers[to.id];
      if (a === "hang") return new Promise<never>(() => undefined);
      if (a instanceof Error) throw a;
      return keys.map((k) => meta(a, k));
    },
  } as unknown as PeerTransport;
}

function inspector(clock: ManualClock, local: VersionedRecord | undefined, peers: PeerTransport, v = view()) {
  return new ReplicaInspector({ selfId: "self", view: v, store: { peekHeader: () => local && headerOf(local) }, transport: peers, clock, timers: clock, timeoutMs: 1500 });
}

const byNode = (copies: readonly ReplicaCopy[]) => Object.fromEntries(copies.map((c) => [c.node, c]));

describe("cluster/replica-inspector", () => {
  it("reads the local copy in place, asks each other owner once, and lists the copies in owner order", async () => {
    const clock = new ManualClock(NOW);
    const calls: string[] = [];
    const rec = live("k", 5_000_001);
    const report = await inspector(clock, rec, transport({ a: rec, b: rec }, calls)).inspect("k");
    expect(report.owners).to.deep.equal(view().ring().ownersOf("k").ids);
    expect(report.copies.map((c) => c.node)).to.deep.equal(report.owners);
    expect(report.copies.map((c) => c.role)).to.deep.equal(["primary", "replica", "replica"]);
    expect(calls.sort()).to.deep.equal(["a:k", "b:k"]);
    for (const c of report.copies) expect(c).to.deep.include({ reachable: true, meta: { key: "k", state: "live", version: 5_000_001, origin: "a", expiresAtMs: 0, lastUpdatedMs: 5_000, valueBytes: 5 } });
    expect(report.divergent).to.equal(false);
  });

  it("reports an owner that does not answer within the timeout as unreachable, without waiting longer", async () => {
    const clock = new ManualClock(NOW);
    const rec = live("k", 7);
    let done = false;
    const pending = inspector(clock, rec, transport({ a: rec, b: "hang" }))
      .inspect("k")
      .then((r) => {
        done = true;
        return r;
      });
    await clock.advanceAsync(1499);
    expect(done).to.equal(false);
    await clock.advanceAsync(1);
    await flush();
    expect(done).to.equal(true);
    const copies = byNode((await pending).copies);
    expect(copies.b).to.deep.include({ reachable: false, error: "inspect of b timed out after 1500 ms" });
    expect(copies.a).to.deep.include({ reachable: true });
    expect(clock.pending).to.equal(0);
  });

  it("reports a failing owner as unreachable with the reason, and cancels its timer", async () => {
    const clock = new ManualClock(NOW);
    const report = await inspector(clock, undefined, transport({ a: new CacheError("UNAVAILABLE", "peer a is unreachable"), b: undefined })).inspect("k");
    expect(byNode(report.copies).a).to.deep.include({ reachable: false, error: "peer a is unreachable" });
    expect(byNode(report.copies).b).to.deep.include({ reachable: true, meta: { key: "k", state: "absent", version: 0, origin: "", expiresAtMs: 0, lastUpdatedMs: 0, valueBytes: 0 } });
    expect(clock.pending).to.equal(0);
  });

  it("an owner this node no longer knows is unreachable without a call", async () => {
    const clock = new ManualClock(NOW);
    const calls: string[] = [];
    const ringOnly = view(["self", "a", "ghost"]);
    const v = { ...ringOnly, peer: (id: string) => (id === "a" ? { id, address: "a:7946" } : undefined) } as ClusterView;
    const report = await inspector(clock, undefined, transport({ a: undefined }, calls), v).inspect("k");
    expect(byNode(report.copies).ghost).to.deep.include({ reachable: false, error: "not a member of this node's view" });
    expect(calls).to.deep.equal(["a:k"]);
  });

  it("flags divergence when reachable owners hold different versions, origins or states; unreachable ones do not count", () => {
    const copy = (node: string, m: Partial<RecordMeta>): ReplicaCopy => ({ node, role: "replica", reachable: true, meta: { ...meta(undefined, "k"), ...m } });
    const down: ReplicaCopy = { node: "z", role: "replica", reachable: false, error: "x" };
    expect(copiesDiverge([copy("a", { state: "live", version: 2, origin: "a" }), copy("b", { state: "live", version: 2, origin: "a" }), down])).to.equal(false);
    expect(copiesDiverge([copy("a", { state: "live", version: 2, origin: "a" }), copy("b", { state: "live", version: 3, origin: "a" })])).to.equal(true);
    expect(copiesDiverge([copy("a", { state: "live", version: 2, origin: "a" }), copy("b", { state: "live", version: 2, origin: "b" })])).to.equal(true);
    expect(copiesDiverge([copy("a", { state: "tombstone", version: 2, origin: "a" }), copy("b", { state: "absent" })])).to.equal(true);
    expect(copiesDiverge([down])).to.equal(false);
  });

  describe("record descriptions (the answering side of Inspect)", () => {
    const clock = new ManualClock(NOW);
    it("describes live values, tombstones and absent keys; a value past its expiry counts as absent", () => {
      const records: Record<string, VersionedRecord> = {
        v: live("v", 9_000_002, "n1", { expiresAtMs: NOW + 1 }),
        t: { ...live("t", 9_000_003, "n2"), value: "", tombstone: true },
        e: live("e", 9_000_004, "n1", { expiresAtMs: NOW }),
      };
      expect(describeRecords({ peekHeader: (k) => (records[k] ? headerOf(records[k]) : undefined) }, clock, ["v", "t", "e", "none"])).to.deep.equal([
        { key: "v", state: "live", version: 9_000_002, origin: "n1", expiresAtMs: NOW + 1, lastUpdatedMs: 9_000, valueBytes: 5 },
        { key: "t", state: "tombstone", version: 9_000_003, origin: "n2", expiresAtMs: 0, lastUpdatedMs: 9_000, valueBytes: 0 },
        { key: "e", state: "absent", version: 0, origin: "", expiresAtMs: 0, lastUpdatedMs: 0, valueBytes: 0 },
        { key: "none", state: "absent", version: 0, origin: "", expiresAtMs: 0, lastUpdatedMs: 0, valueBytes: 0 },
      ]);
    });

    it(`takes 1 to ${INSPECT_KEYS_MAX} keys: none or more is 400 BAD_REQUEST`, () => {
      const store = { peekHeader: () => undefined };
      expect(describeRecords(store, clock, Array.from({ length: INSPECT_KEYS_MAX }, (_, i) => `k${i}`))).to.have.length(INSPECT_KEYS_MAX);
      for (const n of [0, INSPECT_KEYS_MAX + 1]) {
        expect(() => describeRecords(store, clock, Array.from({ length: n }, (_, i) => `k${i}`)))
          .to.throw(CacheError)
          .with.property("code", "BAD_REQUEST");
      }
    });
  });
});
