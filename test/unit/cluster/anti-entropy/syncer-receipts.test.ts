// The requester's side of sync receipts (syncer.ts): a completed sync is reported only when this
// node took every tombstone the peer sent; one it refused means it does not hold them.
import { expect } from "chai";
import type { MerkleScan } from "../../../../src/cluster/anti-entropy/merkle-scan.js";
import { SyncReceipts } from "../../../../src/cluster/anti-entropy/sync-receipts.js";
import { MerkleSyncer } from "../../../../src/cluster/anti-entropy/syncer.js";
import type { ApplyVerdict, ReplicaApplier } from "../../../../src/cluster/replica-applier.js";
import { recordingLogger } from "../../../../src/log/index.js";
import { Metrics } from "../../../../src/observability/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { PeerTransport } from "../../../../src/transport/index.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

const PEER = { id: "p1", address: "p1:7946" };
const AS_OF = 1_790_000_000_000;

function tomb(key: string): VersionedRecord {
  return { key, value: "", version: 1_700_000_000_000_000, origin: "p1", lastUpdatedMs: 1_700_000_000_000, expiresAtMs: 0, tombstone: true };
}

function syncer(verdict: ApplyVerdict, records: VersionedRecord[]) {
  const clock = new ManualClock();
  const receipts = new SyncReceipts({ peers: () => ["p1"], clock, metrics: new Metrics(), logger: recordingLogger("debug"), tombstoneTtlMs: 20_000, enabled: true });
  const scan = { summarize: async () => ({ leafCount: 1, root: () => "local", leaves: () => ["local"] }) } as unknown as MerkleScan;
  const transport = {
    merkleRoot: async () => ({ root: "remote", leafCount: 1, recordCount: records.length, asOfMs: AS_OF }),
    merkleLeaves: async () => ["remote"],
    merkleRange: async () => ({ records, nextCursor: "" }),
  } as unknown as PeerTransport;
  const applier = { apply: () => verdict } as unknown as ReplicaApplier;
  const s = new MerkleSyncer({ selfId: "self", scan, transport, applier, metrics: new Metrics(), logger: recordingLogger("debug"), clock, receipts });
  return { s, receipts };
}

describe("anti-entropy syncer: the receipt of a completed sync", () => {
  it("is kept for the next root request when every record was taken", async () => {
    const { s, receipts } = syncer({ kind: "applied", changed: true }, [tomb("a")]);
    expect(await s.syncWith(PEER)).to.deep.include({ failed: false });
    expect(receipts.pulledThrough("p1")).to.equal(AS_OF);
  });

  it("is not kept when a tombstone was refused (not an owner here, before a contact reset) or invalid", async () => {
    for (const verdict of [{ kind: "refused", reason: "not-owner" }, { kind: "refused", reason: "before-reset" }] as const) {
      const { s, receipts } = syncer(verdict, [tomb("a")]);
      expect(await s.syncWith(PEER)).to.deep.include({ failed: false });
      expect(receipts.pulledThrough("p1"), verdict.reason).to.equal(0);
    }
  });

  it("is kept when only a value was refused (a node at capacity does not pull keys it does not hold): tombstones are what receipts vouch for", async () => {
    const value: VersionedRecord = { ...tomb("v"), value: "x", tombstone: false };
    const { s, receipts } = syncer({ kind: "refused", reason: "at-capacity" }, [value]);
    await s.syncWith(PEER);
    expect(receipts.pulledThrough("p1")).to.equal(AS_OF);
  });
});
