// ReadRepairer with a fake transport and a ManualClock: immediate repairs by default; with
// batching, a queue per (peer, key) keeping the newest record, flushed on the interval or when a
// peer's batch reaches the batch size; a clean stop (drain) sends what is queued.
import { expect } from "chai";
import { CacheError } from "../../../../src/core/errors.js";
import { ReadRepairer } from "../../../../src/cluster/read/read-repair.js";
import { recordingLogger, type RecordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { PeerRef, PeerTransport } from "../../../../src/transport/index.js";
import { flush, ManualClock } from "../../../helpers/manual-clock.js";
import { RecordingTransport } from "../../../helpers/recording-transport.js";

const A: PeerRef = { id: "a", address: "a:7946" };
const B: PeerRef = { id: "b", address: "b:7946" };

function rec(key: string, value: string, version: number, origin = "n1", tombstone = false): VersionedRecord {
  return { key, value, version, origin, lastUpdatedMs: 0, expiresAtMs: 0, tombstone };
}

interface Fixture {
  clock: ManualClock;
  metrics: Metrics;
  logger: RecordingLogger;
  t: RecordingTransport;
  rr: ReadRepairer;
}

function fixture(batchSize: number, intervalMs = 100): Fixture {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const logger = recordingLogger("debug");
  const t = new RecordingTransport();
  const rr = new ReadRepairer({ transport: t as unknown as PeerTransport, selfId: "self", metrics, logger, timers: clock, batchSize, intervalMs });
  return { clock, metrics, logger, t, rr };
}

describe("dist/read-repair ReadRepairer", () => {
  describe("without batching (batch size 0, the default)", () => {
    it("sends each repair at once in its own call, values with Set and tombstones with Remove, counting dist.read_repair", async () => {
      const f = fixture(0);
      f.rr.start();
      f.rr.repair(A, rec("k1", "v", 10));
      f.rr.repair(A, rec("k2", "", 11, "n1", true));
      f.rr.repair(B, rec("k1", "v", 10));
      await flush();
      expect(f.t.summary()).to.deep.equal(["set->a:k1@10", "remove->a:k2@11", "set->b:k1@10"]);
      expect(f.t.sent.every((c) => c.from === "self")).to.equal(true);
      expect(f.metrics.get("dist.read_repair")).to.equal(3);
      expect(f.metrics.get("dist.read_repair.batched")).to.equal(0);
      expect(f.rr.queued).to.equal(0);
      expect(f.clock.pending, "no flush timer without batching").to.equal(0);
    });

    it("a failed repair is not counted, does not throw, and is logged at debug", async () => {
      const f = fixture(0);
      f.t.fail = () => new CacheError("UNAVAILABLE", "down");
      f.rr.repair(A, rec("k", "v", 1));
      await flush();
      expect(f.metrics.get("dist.read_repair")).to.equal(0);
      const failed = f.logger.records.filter((r) => r.message === "read repair failed");
      expect(failed).to.have.length(1);
      expect(failed[0]!.level).to.equal("debug");
    });

    it("drain() waits for repairs under way", async () => {
      const f = fixture(0);
      f.rr.repair(A, rec("k", "v", 1));
      await f.rr.drain();
      expect(f.metrics.get("dist.read_repair")).to.equal(1);
    });
  });

  describe("with batching (batch size 4, interval 100 ms)", () => {
    it("queues repairs per peer (dist.read_repair.batched) and sends them when the interval elapses, one call per peer", async () => {
      const f = fixture(4);
      f.rr.start();
      f.rr.repair(A, rec("k1", "v", 1));
      f.rr.repair(A, rec("k2", "v", 2));
      f.rr.repair(B, rec("k1", "v", 1));
      expect(f.metrics.get("dist.read_repair.batched")).to.equal(3);
      expect(f.rr.queued).to.equal(3);
      await f.clock.advanceAsync(99);
      expect(f.t.sent, "nothing before the interval").to.have.length(0);
      await f.clock.advanceAsync(1);
      expect(f.t.summary().sort()).to.deep.equal(["set->a:k1@1,k2@2", "set->b:k1@1"]);
      expect(f.metrics.get("dist.read_repair")).to.equal(3);
      expect(f.rr.queued).to.equal(0);
      await f.clock.advanceAsync(500);
      expect(f.t.sent, "an empty queue sends nothing").to.have.length(2);
    });

    it("keeps the newest record per (peer, key): a newer one replaces it (dist.read_repair.coalesced), an older or equal one is ignored", async () => {
      const f = fixture(4);
      f.rr.start();
      f.rr.repair(A, rec("k", "v5", 5, "n2"));
      f.rr.repair(A, rec("k", "v7", 7, "n2"));
      f.rr.repair(A, rec("k", "v6", 6, "n1"));
      f.rr.repair(A, rec("k", "v7-tie-larger-origin", 7, "n3"));
      f.rr.repair(A, rec("k", "v7-tie-smaller-origin", 7, "n1"));
      expect(f.metrics.get("dist.read_repair.batched")).to.equal(1);
      expect(f.metrics.get("dist.read_repair.coalesced")).to.equal(2);
      expect(f.rr.queued).to.equal(1);
      await f.clock.advanceAsync(100);
      expect(f.t.sent).to.have.length(1);
      expect(f.t.sent[0]!.records).to.have.length(1);
      expect(f.t.sent[0]!.records[0]).to.include({ version: 7, origin: "n1", value: "v7-tie-smaller-origin" });
      expect(f.metrics.get("dist.read_repair")).to.equal(1);
    });

    it("the same key for two peers is two queue entries (the queue is per peer and key)", () => {
      const f = fixture(4);
      f.rr.repair(A, rec("k", "v", 1));
      f.rr.repair(B, rec("k", "v", 1));
      expect(f.rr.queued).to.equal(2);
      expect(f.metrics.get("dist.read_repair.coalesced")).to.equal(0);
    });

    it("a peer's batch is sent as soon as it reaches the batch size, without the interval and without flushing other peers", async () => {
      const f = fixture(4);
      f.rr.start();
      f.rr.repair(B, rec("b1", "v", 1));
      for (let i = 1; i <= 3; i++) f.rr.repair(A, rec(`a${i}`, "v", i));
      await flush();
      expect(f.t.sent).to.have.length(0);
      f.rr.repair(A, rec("a4", "v", 4));
      await flush();
      expect(f.t.summary()).to.deep.equal(["set->a:a1@1,a2@2,a3@3,a4@4"]);
      expect(f.metrics.get("dist.read_repair")).to.equal(4);
      expect(f.rr.queued, "b's repair still waits for the interval").to.equal(1);
      await f.clock.advanceAsync(100);
      expect(f.t.summary()).to.deep.equal(["set->a:a1@1,a2@2,a3@3,a4@4", "set->b:b1@1"]);
    });

    it("a batch mixing values and tombstones sends a Set and a Remove", async () => {
      const f = fixture(4);
      f.rr.start();
      f.rr.repair(A, rec("live", "v", 1));
      f.rr.repair(A, rec("gone", "", 2, "n1", true));
      await f.clock.advanceAsync(100);
      expect(f.t.summary()).to.deep.equal(["set->a:live@1", "remove->a:gone@2"]);
      expect(f.metrics.get("dist.read_repair")).to.equal(2);
    });

    it("a clean stop (drain) sends the queued repairs at once and stops the interval timer", async () => {
      const f = fixture(4);
      f.rr.start();
      f.rr.repair(A, rec("k1", "v", 1));
      f.rr.repair(B, rec("k2", "v", 2));
      await f.rr.drain();
      expect(f.t.summary().sort()).to.deep.equal(["set->a:k1@1", "set->b:k2@2"]);
      expect(f.metrics.get("dist.read_repair")).to.equal(2);
      expect(f.clock.pending, "the flush timer is cancelled").to.equal(0);
    });

    it("a failed batch is not counted in dist.read_repair and does not break later flushes", async () => {
      const f = fixture(4);
      f.rr.start();
      f.t.fail = () => new CacheError("UNAVAILABLE", "down");
      f.rr.repair(A, rec("k", "v", 1));
      await f.clock.advanceAsync(100);
      expect(f.metrics.get("dist.read_repair")).to.equal(0);
      f.t.fail = () => undefined;
      f.rr.repair(A, rec("k2", "v", 2));
      await f.clock.advanceAsync(100);
      expect(f.metrics.get("dist.read_repair")).to.equal(1);
    });
  });
});
