// A quorum read counts only answers that count (GetResult.abstains unset) and its own copy only
// while this node votes; an answer that does not count is still weighed (a newer record wins) and
// read-repaired when stale, and too few that count is QUORUM_FAILED with details.counted and
// details.abstained (answered: all answers). Reader over a fake transport.
import { expect } from "chai";
import type { Reader } from "../../../../src/cluster/index.js";
import { CacheError } from "../../../../src/core/errors.js";
import { HashRing } from "../../../../src/ring/index.js";
import type { VersionedRecord } from "../../../../src/store/index.js";
import type { HeldRecord, PeerRef, PeerTransport } from "../../../../src/transport/index.js";
import { rec, text } from "../../../sim/data-path-fixtures.js";
import { readerFixture } from "../../../helpers/reader-fixture.js";

const BASE = Date.UTC(2026, 0, 1) * 1000;
const OLD = rec("k", "old", BASE + 1, "self");
const NEWER = rec("k", "newer", BASE + 2, "p1");
const TOMB: VersionedRecord = { ...rec("k", "", BASE + 3, "p2"), tombstone: true };

/** Peers' answers for "k": a held record, or "down" (the call fails). */
type PeerAnswer = HeldRecord | "down";

/** A reader on "self" whose store holds `own`; p1 and p2 answer "k" as given. Repairs sent are in `repairs`. */
function reader(answers: Record<"p1" | "p2", PeerAnswer>, own: VersionedRecord | undefined, votes = true) {
  const repairs: Array<{ to: string; record: VersionedRecord }> = [];
  const transport = {
    async get(to: PeerRef, keys: readonly string[]) {
      const a = answers[to.id as "p1" | "p2"];
      if (a === "down") throw new CacheError("UNAVAILABLE", `${to.id} unreachable`);
      return keys.map(() => a);
    },
    async set(to: PeerRef, _from: string, records: readonly VersionedRecord[]) {
      for (const record of records) repairs.push({ to: to.id, record });
      return records.map(() => ({ kind: "applied", version: 0, origin: "" }));
    },
  } as unknown as PeerTransport;
  transport.remove = transport.set; // tombstones are repaired through Remove
  const f = readerFixture({ transport, ring: HashRing.build(["self", "p1", "p2"], 3), peerIds: ["p1", "p2"], replication: 3, votes: () => votes });
  if (own) f.store.apply(own);
  return Object.assign(f.reader, { repairs });
}

async function outcome(r: Reader): Promise<string> {
  try {
    const { item } = await r.read("k", "quorum");
    return item ? (text(item.value) ?? "") : "absent";
  } catch (e) {
    if (!(e instanceof CacheError)) throw e;
    return `${e.code} ${JSON.stringify(e.details)}`;
  }
}

describe("cluster/read: what a quorum read counts", () => {
  it("an answer that abstains (a former owner's) does not make up the quorum with this node's copy: QUORUM_FAILED, details.counted and abstained", async () => {
    const r = reader({ p1: { record: OLD, counts: false }, p2: "down" }, OLD);
    expect(await outcome(r)).to.equal('QUORUM_FAILED {"consistency":"quorum","answered":2,"required":2,"counted":1,"abstained":1}');
  });

  it("an answer that counts makes the quorum, and its newer tombstone is the answer; the stale answer that did not count is read-repaired too", async () => {
    const r = reader({ p1: { record: OLD, counts: false }, p2: { record: TOMB, counts: true } }, OLD);
    expect(await outcome(r)).to.equal("absent");
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.repairs.map((x) => [x.to, x.record.tombstone])).to.deep.equal([["p1", true]]);
  });

  it("this node's own copy does not count while it does not vote", async () => {
    const r = reader({ p1: { record: OLD, counts: true }, p2: "down" }, OLD, false);
    expect(await outcome(r)).to.equal('QUORUM_FAILED {"consistency":"quorum","answered":2,"required":2,"counted":1,"abstained":1}');
  });

  it("an answer that abstains is still weighed: its newer record wins over the counted ones", async () => {
    const r = reader({ p1: { record: NEWER, counts: false }, p2: { record: OLD, counts: true } }, OLD);
    expect(await outcome(r)).to.equal("newer");
  });
});
