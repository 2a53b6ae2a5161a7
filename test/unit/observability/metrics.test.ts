// The per-node metrics registry: every counter and gauge name of metric-names.ts present from
// construction (zero), nothing else; inc, set and add; snapshot keyed by the full dotted names;
// one registry per node (two registries never share values).
import { expect } from "chai";
import { COUNTERS, GAUGES, METRIC_HELP, Metrics, type MetricName } from "../../../src/observability/index.js";

const ALL: readonly MetricName[] = [...COUNTERS, ...GAUGES];

describe("observability/metrics", () => {
  it("names every metric SPEC.md lists, the wrapper-level ones included, with the dist. prefix", () => {
    const spec = [
      "dist.members.alive", "dist.nodes.suspect", "dist.nodes.dead", "dist.nodes.removed", "dist.membership.version",
      "dist.write.attempts", "dist.write.quorum_failures", "dist.write.forward_promotion", "dist.write.apply_refused",
      "dist.version.conflicts", "dist.heartbeat.failure", "dist.heartbeat.indirect_probe.success",
      "dist.heartbeat.indirect_probe.failure", "dist.heartbeat.indirect_probe.refuted",
      "dist.hinted.queued", "dist.hinted.replayed", "dist.hinted.expired", "dist.hinted.dropped", "dist.hinted.global_dropped", "dist.hinted.bytes",
      "dist.migration.queued", "dist.migration.replayed", "dist.migration.expired", "dist.migration.dropped", "dist.migration.last_age_ns",
      "dist.rebalance.batches", "dist.rebalance.keys", "dist.rebalance.throttle", "dist.rebalance.last_ns",
      "dist.merkle.syncs", "dist.merkle.keys_pulled", "dist.merkle.last_diff_ns",
      "dist.auto_sync.last_ns", "dist.auto_sync.backoff_factor", "dist.auto_sync.clean_ticks",
      "dist.read_repair", "dist.read_repair.batched", "dist.read_repair.coalesced", "dist.drains", "dist.chaos.drops", "dist.chaos.latencies",
      "eviction_loop_count", "item_evicted_count", "evicted_item_count", "eviction_loop_duration",
    ];
    expect(ALL).to.include.members(spec);
    expect(new Set(ALL).size, "no name twice").to.equal(ALL.length);
    expect(ALL).to.include("dist.events.dropped");
    for (const name of ALL) expect(METRIC_HELP[name], `help text of ${name}`).to.be.a("string").and.not.equal("");
  });

  it("has every counter and gauge in the snapshot from construction, as numbers, and no other key", () => {
    const snap = new Metrics().snapshot();
    expect(Object.keys(snap).sort()).to.deep.equal([...ALL].sort());
    for (const name of ALL) expect(snap[name], name).to.be.a("number").and.satisfy(Number.isFinite);
    for (const name of COUNTERS) expect(snap[name], name).to.equal(0);
    expect(Metrics.names()).to.deep.equal(ALL);
  });

  it("inc adds 1 by default and `by` when given; get and snapshot read the same value", () => {
    const m = new Metrics();
    m.inc("dist.write.attempts");
    m.inc("dist.write.attempts");
    m.inc("dist.write.attempts", 5);
    m.inc("item_evicted_count", 0.5);
    expect(m.get("dist.write.attempts")).to.equal(7);
    expect(m.snapshot()["dist.write.attempts"]).to.equal(7);
    expect(m.get("item_evicted_count")).to.equal(0.5);
    // Nothing else moved.
    const others = Object.entries(m.snapshot()).filter(([k]) => k !== "dist.write.attempts" && k !== "item_evicted_count" && (COUNTERS as readonly string[]).includes(k));
    expect(others.every(([, v]) => v === 0)).to.equal(true);
  });

  it("set replaces a gauge and add moves it by a signed amount", () => {
    const m = new Metrics();
    m.set("dist.hinted.bytes", 1000);
    m.add("dist.hinted.bytes", 250);
    m.add("dist.hinted.bytes", -600);
    expect(m.get("dist.hinted.bytes")).to.equal(650);
    m.set("dist.hinted.bytes", 3);
    expect(m.get("dist.hinted.bytes")).to.equal(3);
    m.set("eviction_loop_duration", 123_456_789);
    expect(m.snapshot().eviction_loop_duration).to.equal(123_456_789);
  });

  it("two registries are independent (one per node, no global state)", () => {
    const a = new Metrics();
    const b = new Metrics();
    a.inc("dist.drains");
    a.set("dist.members.alive", 3);
    expect(b.get("dist.drains")).to.equal(0);
    expect(b.get("dist.members.alive")).to.equal(0);
    expect(a.get("dist.drains")).to.equal(1);
  });

  it("a snapshot is a copy: later changes do not alter it", () => {
    const m = new Metrics();
    const before = m.snapshot();
    m.inc("dist.read_repair");
    expect(before["dist.read_repair"]).to.equal(0);
    expect(m.snapshot()["dist.read_repair"]).to.equal(1);
  });
});
