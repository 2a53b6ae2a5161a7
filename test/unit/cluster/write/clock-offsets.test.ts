import { expect } from "chai";
import { ClockOffsets } from "../../../../src/cluster/write/clock-offsets.js";
import type { CacheError } from "../../../../src/core/errors.js";
import { Metrics } from "../../../../src/observability/index.js";
import { ManualClock } from "../../../helpers/manual-clock.js";

const LIMITS = { offsetMaxMs: 1_000, sampleTtlMs: 30_000 };

function setup() {
  const clock = new ManualClock();
  const metrics = new Metrics();
  const offsets = new ClockOffsets({ clock, metrics, limits: LIMITS });
  /** A probe answered after `rttMs` by a peer whose clock reads `peerOffsetMs` from ours. */
  const probe = (peer: string, peerOffsetMs: number, rttMs = 2) => {
    const sent = clock.nowMs();
    offsets.sample(peer, sent, sent + rttMs, sent + rttMs / 2 + peerOffsetMs);
  };
  return { clock, metrics, offsets, probe };
}

function refusal(offsets: ClockOffsets): CacheError | undefined {
  try {
    offsets.checkCanStamp();
    return undefined;
  } catch (err) {
    return err as CacheError;
  }
}

describe("ClockOffsets: a node whose clock is far from the cluster's stamps no writes", () => {
  it("a node 30 s ahead of its four peers refuses with 503 UNAVAILABLE and says by how much", () => {
    const { offsets, probe, metrics } = setup();
    for (const p of ["b", "c", "d", "e"]) probe(p, -30_000);
    expect(offsets.selfOffsetMs()).to.equal(30_000);
    const err = refusal(offsets);
    expect(err?.code).to.equal("UNAVAILABLE");
    expect(err?.status).to.equal(503);
    expect(err?.message).to.contain("30.0 s ahead of");
    expect(err?.details).to.deep.equal({ clock_offset_ms: 30_000, limit_ms: 1_000 });
    expect(metrics.snapshot()["dist.clock.refused_writes"]).to.equal(1);
    expect(metrics.snapshot()["dist.clock.offset_ns"]).to.equal(30_000 * 1e6);
  });

  it("the correct nodes of that cluster keep stamping: one skewed peer does not move the median", () => {
    const { offsets, probe } = setup();
    probe("b", 3);
    probe("c", -4);
    probe("d", 30_000);
    expect(Math.abs(offsets.selfOffsetMs())).to.be.at.most(4);
    expect(refusal(offsets)).to.equal(undefined);
  });

  it("a node behind the cluster is refused too", () => {
    const { offsets, probe } = setup();
    probe("b", 5_000);
    probe("c", 5_000);
    expect(offsets.selfOffsetMs()).to.equal(-5_000);
    expect(refusal(offsets)?.message).to.contain("5.0 s behind");
  });

  it("in a cluster of two nothing says which clock is wrong: neither node is refused", () => {
    const { offsets, probe } = setup();
    probe("b", -30_000);
    expect(offsets.selfOffsetMs()).to.equal(0);
    expect(refusal(offsets)).to.equal(undefined);
  });

  it("offsets within the limit are allowed", () => {
    const { offsets, probe } = setup();
    probe("b", -900);
    probe("c", -900);
    expect(offsets.selfOffsetMs()).to.equal(900);
    expect(refusal(offsets)).to.equal(undefined);
  });

  it("ignores probes slower than the limit, probes without a clock, stale samples and forgotten peers", () => {
    const { clock, offsets, probe } = setup();
    // One skewed sample is kept: a wrongly accepted second one below would make a skewed majority.
    probe("d", -30_000);
    probe("b", -30_000, 1_500); // round trip past the limit: cannot tell skew from delay
    offsets.sample("c", clock.nowMs(), clock.nowMs() + 1, 0); // an older peer sends no clock
    expect(offsets.selfOffsetMs()).to.equal(0);
    probe("b", -30_000);
    probe("c", -30_000);
    expect(refusal(offsets)?.code).to.equal("UNAVAILABLE");
    offsets.forget("b");
    offsets.forget("c");
    expect(refusal(offsets)).to.equal(undefined);
    probe("b", -30_000);
    probe("c", -30_000);
    clock.advance(LIMITS.sampleTtlMs + 10);
    expect(refusal(offsets)).to.equal(undefined);
  });

  it("retain keeps only the members still listed: a removed majority no longer refuses this node", () => {
    const { offsets, probe } = setup();
    probe("b", -30_000);
    probe("c", -30_000);
    probe("d", -30_000);
    probe("e", 0);
    expect(refusal(offsets)?.code).to.equal("UNAVAILABLE");
    offsets.retain(new Set(["a", "e"]));
    expect(offsets.selfOffsetMs()).to.equal(0);
    expect(refusal(offsets)).to.equal(undefined);
  });

  it("the estimate is centred on the round trip: a slow answer does not read as skew", () => {
    const { offsets, probe } = setup();
    probe("b", 0, 800);
    probe("c", 0, 800);
    expect(offsets.selfOffsetMs()).to.equal(0);
  });
});
