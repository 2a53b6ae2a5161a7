// Byte budgets of the peer protocol (review fix dce0726): every peer batch, page and answer is cut
// at PEER_BATCH_BYTES (8 MiB, half the 16 MiB body cap) as well as by count, one record larger
// than the budget travelling alone. Checked on each producer: recordsForPeer (a prefix of
// the keys), the Reader (asks again for the rest), rebalance migrations (a sim join, observed on
// the receiver), hint replay, read-repair sends, AntiEntropy.range pages (the cursor resumes) and
// ShardedStore.keysPage (8 MiB of keys, truncated=true).
import { expect } from "chai";
import { PEER_BATCH_BYTES, PEER_BODY_BYTES_MAX } from "../../../src/core/limits.js";
import { HINTED_METRICS } from "../../../src/cluster/hints/hint-metrics.js";
import { HintQueue } from "../../../src/cluster/hints/hint-queue.js";
import { ReadRepairer } from "../../../src/cluster/index.js";
import { recordsForPeer } from "../../../src/cluster/read/record-answers.js";
import { byteSize, chunkBy } from "../../../src/cluster/record-size.js";
import { recordingLogger } from "../../../src/log/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { HashRing } from "../../../src/ring/index.js";
import { ShardedStore, type VersionedRecord } from "../../../src/store/index.js";
import type { ApplyOutcome, MerkleRangePage, PeerEndpoint, PeerRef, PeerTransport } from "../../../src/transport/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { readerFixture } from "../../helpers/reader-fixture.js";
import { simCluster, withSeed, type SimCluster, type SimNode } from "../../helpers/sim-cluster.js";
import { TEST_HASH_SEED } from "../../helpers/hash-seed.js";

const MIB = 1024 * 1024;
/** Version base in the hybrid-clock range of the ManualClock (2026-01-01). */
const BASE = Date.UTC(2026, 0, 1) * 1000;
const A: PeerRef = { id: "a", address: "a:7946" };

/** One shared value string per size, so large records cost no extra memory. */
const values = new Map<number, string>();
function valueOf(bytes: number): string {
  let v = values.get(bytes);
  if (v === undefined) {
    v = "x".repeat(bytes);
    values.set(bytes, v);
  }
  return v;
}

function rec(key: string, bytes: number, version = BASE + 1, extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key, value: valueOf(bytes), version, origin: "n1", lastUpdatedMs: Math.floor(version / 1000), expiresAtMs: 0, tombstone: false, ...extra };
}

const bytesOf = (records: readonly VersionedRecord[]) => records.reduce((n, r) => n + byteSize(r), 0);

/** "n records, b bytes" of every call that passes the budget with more than one record. */
function overBudget(calls: ReadonlyArray<readonly VersionedRecord[]>): string[] {
  return calls.filter((c) => c.length > 1 && bytesOf(c) > PEER_BATCH_BYTES).map((c) => `${c.length} records, ${bytesOf(c)} bytes`);
}

function newStore(clock = new ManualClock(), shards = 4, capacity = 100_000): ShardedStore {
  return new ShardedStore({ shards, capacity, algorithm: "lru", tombstoneTtlMs: 600_000, tombstoneBytesMax: 64 * 1024 * 1024, hashSeed: TEST_HASH_SEED, clock, metrics: new Metrics() });
}

describe("byte budgets of peer batches, pages and answers (PEER_BATCH_BYTES)", () => {
  describe("chunkBy", () => {
    it("cuts runs at maxItems and before maxBytes would be passed, keeps the order, and puts an item larger than maxBytes alone", () => {
      const sizes = [3, 3, 3, 9, 1, 1, 1, 1, 1, 4];
      const runs = chunkBy(sizes, (n) => n, 4, 8);
      expect(runs).to.deep.equal([[3, 3], [3], [9], [1, 1, 1, 1], [1, 4]]);
      expect(chunkBy([], (n: number) => n, 4, 8)).to.deep.equal([]);
    });
  });

  describe("recordsForPeer (the answering side of Get)", () => {
    const handler = (store: ShardedStore) => ({ getRecords: (keys: readonly string[]) => recordsForPeer(store, keys) });

    it("answers a prefix of the keys once their values would pass PEER_BATCH_BYTES (3 x 3 MiB: two records), and the rest when asked again", () => {
      const store = newStore();
      const keys = ["g0", "g1", "g2", "g3", "g4"];
      for (const k of keys) store.apply(rec(k, 3 * MIB));
      const h = handler(store);
      const first = h.getRecords(keys);
      expect(first.map((r) => r?.key)).to.deep.equal(["g0", "g1"]);
      expect(bytesOf(first as VersionedRecord[])).to.be.at.most(PEER_BATCH_BYTES);
      const second = h.getRecords(keys.slice(first.length));
      expect(second.map((r) => r?.key)).to.deep.equal(["g2", "g3"]);
      expect(h.getRecords(keys.slice(4)).map((r) => r?.key)).to.deep.equal(["g4"]);
    });

    it("answers at least one record even when that value alone is larger than the budget (9 MiB), and answers every key while they fit (missing keys as undefined)", () => {
      const store = newStore();
      store.apply(rec("huge", 9 * MIB));
      store.apply(rec("small", 10));
      const h = handler(store);
      expect(h.getRecords(["huge", "small"]).map((r) => r?.key)).to.deep.equal(["huge"]);
      expect(h.getRecords(["small", "missing", "huge"]).map((r) => r?.key)).to.deep.equal(["small", undefined]);
      expect(h.getRecords(["small", "missing"]).map((r) => r?.key)).to.deep.equal(["small", undefined]);
    });
  });

  describe("Reader", () => {
    it("asks the peer again until every key is answered when the peer answers prefixes (a fake transport answering two records per call)", async () => {
      const ring = HashRing.build(["self", "p"], 1);
      const keys: string[] = [];
      for (let i = 0; keys.length < 6; i++) if (ring.ownersOf(`r-${i}`).primary === "p") keys.push(`r-${i}`);
      const remote = new Map(keys.map((k, i) => [k, rec(k, 10, BASE + i + 1, { origin: "p" })]));
      const calls: string[][] = [];
      const transport = {
        async get(_to: PeerRef, asked: readonly string[]) {
          calls.push([...asked]);
          await Promise.resolve();
          return asked.slice(0, 2).map((k) => ({ record: remote.get(k), counts: true }));
        },
      } as unknown as PeerTransport;
      const { reader } = readerFixture({ transport, ring, peerIds: ["p"], replication: 1 });
      const results = await Promise.all(keys.map((k) => reader.read(k, "one")));
      expect(results.map((r) => r.item?.key)).to.deep.equal(keys);
      expect(results.map((r) => r.item?.version)).to.deep.equal(keys.map((k) => remote.get(k)?.version));
      expect(calls, "one batch of six keys, asked again for the rest twice").to.deep.equal([keys, keys.slice(2), keys.slice(4)]);
    });

    it(
      "concurrent reads of 3 MiB values through a non-owner (sim, replication 1) all answer the value: the owner answers prefixes within the budget and the reader asks again",
      withSeed(401, async () => {
        const c = await simCluster({ nodes: 2, seed: 401, env: { SERVICE_REPLICATION: "1" } });
        try {
          await c.advance(2_000);
          const keys: string[] = [];
          for (let i = 0; keys.length < 6; i++) if (c.node("n1").cache.owners(`big-${i}`).primary === "n2") keys.push(`big-${i}`);
          for (const [i, k] of keys.entries()) c.node("n2").store.apply(rec(k, 3 * MIB, BASE + i + 1, { origin: "n2" }));
          const answers = spyEndpoint(c, c.sim("n2"), "getRecords");
          const results = await Promise.all(keys.map((k) => c.node("n1").cache.get(k, "one")));
          expect(results.map((r) => r.item?.value.length)).to.deep.equal(keys.map(() => 3 * MIB));
          expect(answers.length, "the keys took more than one Get answer").to.be.at.least(3);
          expect(overBudget(answers)).to.deep.equal([]);
        } finally {
          await c.stop();
        }
      }),
    );
  });

  describe("rebalance migrations", () => {
    /**
     * n1 (replication 1) holds `sizes[i]`-byte values under keys that move to n2 once n2 joins
     * (in n1's scan order: shard by shard, insertion order within a shard), plus three keys that
     * stay; n2 joins with a spy on its Set calls. Returns the moving keys (in scan order) and the calls.
     */
    async function joinWithValues(seed: number, sizes: readonly number[]) {
      const c = await simCluster({ nodes: 1, seed, env: { SERVICE_REPLICATION: "1", SERVICE_REBALANCE_INTERVAL: "250ms" } });
      await c.advance(1_000);
      const n1 = c.node("n1");
      const two = HashRing.build(["n1", "n2"], 1);
      const candidates: string[] = [];
      const staying: string[] = [];
      for (let i = 0; candidates.length < sizes.length || staying.length < 3; i++) {
        const k = `m-${i}`;
        if (two.ownersOf(k).primary === "n2") {
          if (candidates.length < sizes.length) candidates.push(k);
        } else if (staying.length < 3) staying.push(k);
      }
      // In scan order: by shard; keys of one shard are scanned in insertion order.
      const moving = [...candidates].sort((a, b) => n1.store.shardOf(a) - n1.store.shardOf(b) || candidates.indexOf(a) - candidates.indexOf(b));
      for (const [i, k] of moving.entries()) n1.store.apply(rec(k, sizes[i] as number, BASE + i + 1));
      for (const [i, k] of staying.entries()) n1.store.apply(rec(k, 10, BASE + 100 + i));
      const n2 = c.join("n2");
      const sets = spyEndpoint(c, n2, "applySet");
      await c.advance(5_000);
      return { c, n1, n2, moving, sets };
    }

    it(
      "a node joins a replication-1 node holding 20 x 1 MiB values it now owns: the migration is cut by bytes into several Set calls (not one batch of SERVICE_REBALANCE_BATCH_SIZE = 64), n2 ends up holding every key it owns and n1 keeps none",
      withSeed(402, async () => {
        const { c, n1, n2, moving, sets } = await joinWithValues(402, Array.from({ length: 20 }, () => MIB));
        try {
          expect(moving.filter((k) => n2.node.store.peek(k) === undefined), "keys n2 owns but does not hold").to.deep.equal([]);
          expect(moving.filter((k) => n1.store.peek(k) !== undefined), "copies n1 kept after migrating them").to.deep.equal([]);
          expect(sets.length, "Set calls").to.be.at.least(3);
          expect(Math.max(...sets.map((s) => s.length)), "records per Set call").to.be.at.most(9);
        } finally {
          await c.stop();
        }
      }),
    );

    it(
      "every migration Set call of 1 MiB values stays within PEER_BATCH_BYTES (a batch stops before the record that would pass the budget)",
      withSeed(402, async () => {
        const { c, sets } = await joinWithValues(402, Array.from({ length: 20 }, () => MIB));
        try {
          expect(sets.length).to.be.at.least(3);
          expect(overBudget(sets)).to.deep.equal([]);
        } finally {
          await c.stop();
        }
      }),
    );

    it(
      "a 15 MiB value (the largest SERVICE_MAX_VALUE_BYTES allows) scanned after 1 MiB values travels alone: no migration call passes the 16 MiB peer body cap",
      withSeed(404, async () => {
        const { c, n2, moving, sets } = await joinWithValues(404, [...Array.from({ length: 20 }, () => MIB), 15 * MIB]);
        try {
          const huge = moving.at(-1) as string;
          expect(moving.filter((k) => n2.node.store.peek(k) === undefined), "keys n2 owns but does not hold").to.deep.equal([]);
          const withHuge = sets.find((s) => s.some((r) => r.key === huge)) ?? [];
          expect(
            { records: withHuge.length, overBodyCap: sets.filter((s) => bytesOf(s) > PEER_BODY_BYTES_MAX).map((s) => `${s.length} records, ${bytesOf(s)} bytes`) },
            "the call carrying the 15 MiB record",
          ).to.deep.equal({ records: 1, overBodyCap: [] });
          expect(overBudget(sets)).to.deep.equal([]);
        } finally {
          await c.stop();
        }
      }),
    );
  });

  describe("hint replay", () => {
    it("replays a target's hints in calls of at most PEER_BATCH_BYTES (3 MiB values two per call, a 9 MiB value alone) until the queue is empty", async () => {
      const clock = new ManualClock();
      const metrics = new Metrics();
      const q = new HintQueue({ clock, metrics, logger: recordingLogger("error"), limits: { ttlMs: 30_000, maxPerNode: 10_000, maxBytes: 64 * MIB }, names: HINTED_METRICS });
      const keys = Array.from({ length: 8 }, (_, i) => `h${i}`);
      for (const [i, k] of keys.entries()) expect(q.add(A, rec(k, i === 3 ? 9 * MIB : 3 * MIB, BASE + i + 1))).to.equal(true);
      const calls: VersionedRecord[][] = [];
      const transport = {
        async set(_to: PeerRef, _from: string, records: readonly VersionedRecord[]): Promise<ApplyOutcome[]> {
          calls.push([...records]);
          return records.map((r) => ({ kind: "applied", version: r.version, origin: r.origin }));
        },
      } as unknown as PeerTransport;
      for (let i = 0; i < 20 && q.size("a") > 0; i++) await q.replay(transport, "self");
      expect(q.size()).to.equal(0);
      expect(calls.flat().map((r) => r.key)).to.deep.equal(keys);
      expect(calls.map((c) => c.length)).to.deep.equal([2, 1, 1, 2, 2]);
      expect(overBudget(calls)).to.deep.equal([]);
      expect(metrics.get("dist.hinted.replayed")).to.equal(keys.length);
    });
  });

  describe("read repair", () => {
    it("a flush of batched repairs sends values and tombstones in calls of at most PEER_BATCH_BYTES (a 9 MiB value alone)", async () => {
      const clock = new ManualClock();
      const calls: Array<{ kind: string; records: VersionedRecord[] }> = [];
      const record = (kind: string) => async (_to: PeerRef, _from: string, records: readonly VersionedRecord[]) => {
        calls.push({ kind, records: [...records] });
        return records.map(() => "applied");
      };
      const transport = { set: record("set"), remove: record("remove") } as unknown as PeerTransport;
      const metrics = new Metrics();
      const rr = new ReadRepairer({ transport, selfId: "self", metrics, logger: recordingLogger("error"), timers: clock, batchSize: 100, intervalMs: 100 });
      const keys = Array.from({ length: 7 }, (_, i) => `rr${i}`);
      for (const [i, k] of keys.entries()) rr.repair(A, rec(k, i === 4 ? 9 * MIB : 3 * MIB, BASE + i + 1));
      rr.repair(A, rec("t1", 0, BASE + 20, { tombstone: true }));
      rr.repair(A, rec("t2", 0, BASE + 21, { tombstone: true }));
      await rr.flush();
      expect(calls.map((c) => `${c.kind}:${c.records.map((r) => r.key).join(",")}`)).to.deep.equal([
        "set:rr0,rr1",
        "set:rr2,rr3",
        "set:rr4",
        "set:rr5,rr6",
        "remove:t1,t2",
      ]);
      expect(overBudget(calls.map((c) => c.records))).to.deep.equal([]);
      expect(metrics.get("dist.read_repair")).to.equal(9);
    });
  });

  describe("AntiEntropy.range", () => {
    /**
     * A 2-node sim (replication 2, auto-sync off) where n1 alone holds records of `sizes` bytes
     * (keys in n1's scan order); returns the cluster and the keys.
     */
    async function heldByN1(seed: number, sizes: readonly number[]) {
      const c = await simCluster({ nodes: 2, seed, env: { SERVICE_REPLICATION: "2", SERVICE_AUTO_SYNC_INTERVAL: "0" } });
      await c.advance(3_000);
      const n1 = c.node("n1");
      const names = Array.from({ length: sizes.length }, (_, i) => `ae-${i}`);
      const keys = [...names].sort((a, b) => n1.store.shardOf(a) - n1.store.shardOf(b) || names.indexOf(a) - names.indexOf(b));
      for (const [i, k] of keys.entries()) n1.store.apply(rec(k, sizes[i] as number, BASE + i + 1));
      return { c, keys };
    }

    /** Every page of n1's answer to n2 for all records (one leaf), following the cursor. */
    async function allPages(c: SimCluster): Promise<MerkleRangePage[]> {
      const pages: MerkleRangePage[] = [];
      let cursor = "";
      do {
        const page = await c.node("n1").endpoint.merkleRange("n2", 1, [0], cursor);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor !== "" && pages.length < 50);
      return pages;
    }

    it(
      "pages of 12 x 2 MiB records end early with a cursor (not one page of up to 1000 records), the cursor resumes where the page stopped so every record comes once, and a sync through those pages pulls them all",
      withSeed(403, async () => {
        const { c, keys } = await heldByN1(403, Array.from({ length: 12 }, () => 2 * MIB));
        try {
          const pages = await allPages(c);
          expect(pages.length, "pages").to.be.within(3, 6);
          const seen = pages.flatMap((p) => p.records.map((r) => r.key));
          expect(seen).to.deep.equal(keys);

          const served = spyEndpoint(c, c.sim("n1"), "merkleRange");
          const r = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
          expect(r).to.deep.equal({ pulled: keys.length, clean: false, failed: false });
          expect(served.length).to.equal(pages.length);
          expect(keys.filter((k) => c.node("n2").store.peek(k) === undefined)).to.deep.equal([]);
        } finally {
          await c.stop();
        }
      }),
    );

    it(
      "no page of 2 MiB records passes PEER_BATCH_BYTES (a page stops before the record that would pass the budget)",
      withSeed(403, async () => {
        const { c } = await heldByN1(403, Array.from({ length: 12 }, () => 2 * MIB));
        try {
          expect(overBudget((await allPages(c)).map((p) => p.records))).to.deep.equal([]);
        } finally {
          await c.stop();
        }
      }),
    );

    it(
      "a 15 MiB record scanned after 5 x 1 MiB records is answered alone: no page passes the 16 MiB peer body cap, and a sync still pulls every record",
      withSeed(405, async () => {
        const { c, keys } = await heldByN1(405, [MIB, MIB, MIB, MIB, MIB, 15 * MIB]);
        try {
          const pages = await allPages(c);
          const huge = keys.at(-1) as string;
          expect(
            {
              withHuge: pages.find((p) => p.records.some((r) => r.key === huge))?.records.length,
              overBodyCap: pages.filter((p) => bytesOf(p.records) > PEER_BODY_BYTES_MAX).map((p) => `${p.records.length} records, ${bytesOf(p.records)} bytes`),
            },
            "the page carrying the 15 MiB record",
          ).to.deep.equal({ withHuge: 1, overBodyCap: [] });
          const r = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
          expect(r.pulled).to.equal(keys.length);
        } finally {
          await c.stop();
        }
      }),
    );
  });

  describe("ShardedStore.keysPage", () => {
    it("stops once the page holds 8 MiB of keys (counted as 3 bytes per character) with truncated=true, and the next page resumes there until every key was listed once", () => {
      const store = newStore(new ManualClock(), 1);
      const pad = "k".repeat(4000);
      const keys = Array.from({ length: 1000 }, (_, i) => `${pad}-${i}`);
      for (const [i, k] of keys.entries()) store.apply(rec(k, 1, BASE + i + 1));
      const pages: Array<ReturnType<ShardedStore["keysPage"]>> = [];
      let at: { shard: number; slot: number } | undefined = { shard: 0, slot: 0 };
      while (at && pages.length < 10) {
        const page = store.keysPage(at.shard, at.slot, 0, () => true);
        pages.push(page);
        at = page.next;
      }
      const first = pages[0] as (typeof pages)[number];
      expect(first.truncated).to.equal(true);
      expect(first.next).to.deep.equal({ shard: 0, slot: first.next?.slot });
      const pageBytes = (p: (typeof pages)[number]) => p.keys.reduce((n, k) => n + k.length * 3, 0);
      expect(first.keys.length).to.be.within(600, 750);
      expect(pageBytes(first)).to.be.within(PEER_BATCH_BYTES, PEER_BATCH_BYTES + 3 * 4010);
      expect(pages.length).to.equal(2);
      expect((pages[1] as (typeof pages)[number]).truncated).to.equal(false);
      const listed = pages.flatMap((p) => p.keys);
      expect(listed.length).to.equal(keys.length);
      expect(new Set(listed).size).to.equal(keys.length);
      // A limit larger than what fits does not lift the byte cut.
      expect(store.keysPage(0, 0, 5000, () => true).keys.length).to.equal(first.keys.length);
    });
  });
});

/**
 * Replaces `sim`'s endpoint on the network with one recording the records of each `method` call
 * (the records received by applySet, or answered by getRecords / merkleRange).
 */
function spyEndpoint(c: SimCluster, sim: SimNode, method: "applySet" | "getRecords" | "merkleRange"): VersionedRecord[][] {
  const seen: VersionedRecord[][] = [];
  const e = sim.node.endpoint;
  const spy: PeerEndpoint = {
    ...e,
    applySet: (from, records) => {
      if (method === "applySet") seen.push([...records]);
      return e.applySet(from, records);
    },
    getRecords: (keys) => {
      const out = e.getRecords(keys);
      if (method === "getRecords") seen.push(out.flatMap((h) => (h.record ? [h.record] : [])));
      return out;
    },
    merkleRange: async (requester, leafCount, leaves, cursor) => {
      const page = await e.merkleRange(requester, leafCount, leaves, cursor);
      if (method === "merkleRange") seen.push(page.records);
      return page;
    },
  };
  c.network.register(sim.address, spy);
  return seen;
}
