// GET, GET with a bearer token, and PUT of one node against the ceiling (bare node:http + Map);
// the node's incr against its PUT and its lease hit against its plain GET; server on core 0 and
// wrk on core 1, rounds alternating between the sides.
import { alternate, GET, PUT, type RoundResult, type Settings, type Workload } from "../measure.js";
import { ratioFigure, type Report } from "../report.js";
import { baseNode, ceiling, node, nodeWithLimits, nodeWithToken } from "./sides.js";

const ops = (r: RoundResult) => r.opsPerSec;
const cpu = (r: RoundResult) => r.cpuUsPerRequest;

function describe(s: Settings): string {
  return (
    `fresh server per round on core 0 (taskset), wrk -t1 -c${s.connections} on core 1, random keys out of ${s.keys.toLocaleString("en-US")} ` +
    `(preloaded), ${s.valueBytes}-byte values; ${s.warmupSeconds} s warm-up, then ${s.seconds} s measured; ${s.rounds} rounds alternating`
  );
}

/** GET of the node (and/or the node with a bearer token) against the ceiling; returns the node's GET rounds. */
export async function getPart(want: { get: boolean; auth: boolean }, s: Settings, report: Report): Promise<RoundResult[] | undefined> {
  const withToken = nodeWithToken();
  const sides = [ceiling, ...(want.get ? [node] : []), ...(want.auth ? [withToken] : [])];
  report.section(`GET: ${sides.map((x) => x.name).join(" / ")}`, describe(s));
  const rounds = await alternate(sides, GET, s, (r) => report.round(r));
  const base = rounds.get(ceiling.name) ?? [];
  if (want.get) {
    const n = rounds.get(node.name) ?? [];
    report.figure(ratioFigure("get.ops", "GET, one node / ceiling (ops/s)", n, base, ops, "≥ 0.75"));
    report.figure(ratioFigure("get.cpu", "GET, one node / ceiling (CPU per request)", n, base, cpu, "≤ 1.35"));
  }
  if (want.auth) {
    const a = rounds.get(withToken.name) ?? [];
    report.figure(ratioFigure("get-auth.ops", "GET with a bearer token / ceiling (ops/s)", a, base, ops, "≥ 0.70"));
    report.figure(ratioFigure("get-auth.cpu", "GET with a bearer token / ceiling (CPU per request)", a, base, cpu));
  }
  return want.get ? rounds.get(node.name) : undefined;
}

export async function putPart(s: Settings, report: Report): Promise<void> {
  report.section("PUT: ceiling / node", describe(s));
  const rounds = await alternate([ceiling, node], PUT, s, (r) => report.round(r));
  const n = rounds.get(node.name) ?? [];
  const base = rounds.get(ceiling.name) ?? [];
  report.figure(ratioFigure("put.ops", "PUT, one node / ceiling (ops/s)", n, base, ops, "≥ 0.65"));
  report.figure(ratioFigure("put.cpu", "PUT, one node / ceiling (CPU per request)", n, base, cpu, "≤ 1.5"));
}

/**
 * GET with rate limits on but never hit, against the same node with limits off; with
 * BENCH_BASE_BIN set, also against another build of the node (the cost of a change, such as the
 * request metrics, within one run).
 */
export async function getLimitsPart(s: Settings, report: Report): Promise<void> {
  const baseBin = process.env.BENCH_BASE_BIN;
  const base = baseBin ? baseNode(baseBin) : undefined;
  const sides = [node, nodeWithLimits, ...(base ? [base] : [])];
  report.section(`GET: ${sides.map((x) => x.name).join(" / ")}`, describe(s));
  const rounds = await alternate(sides, GET, s, (r) => report.round(r));
  const off = rounds.get(node.name) ?? [];
  const on = rounds.get(nodeWithLimits.name) ?? [];
  report.figure(ratioFigure("get-limits.ops", "GET with limits on, not hit / limits off (ops/s)", on, off, ops, "≥ 0.95"));
  report.figure(ratioFigure("get-limits.cpu", "GET with limits on, not hit / limits off (CPU per request)", on, off, cpu));
  if (base) {
    const other = rounds.get(base.name) ?? [];
    report.figure(ratioFigure("get-base.ops", "GET, this build / base build (ops/s)", off, other, ops, "≥ 0.95"));
    report.figure(ratioFigure("get-base.cpu", "GET, this build / base build (CPU per request)", off, other, cpu));
  }
}

/** POST /v1/cache/ctr-<n>/incr without a body (+1; the counters start at the first increment). */
export const INCR: Workload = Object.freeze({ name: "incr", method: "POST", prefix: "ctr-", suffix: "/incr" });

/** A lease read of the preloaded keys: every one is a hit. */
export const LEASE_GET: Workload = Object.freeze({ name: "GET ?lease", method: "GET", suffix: "?lease=10s&wait=2s" });

/** The node's incr against its own PUT (same keys count, fresh node per round): the target is incr ≥ 0.8 × PUT. */
export async function incrPart(s: Settings, report: Report): Promise<void> {
  const incr = { ...node, name: "node incr", workload: INCR };
  const put = { ...node, name: "node PUT", workload: PUT };
  report.section("incr: POST /v1/cache/{key}/incr / PUT, one node", `${describe(s)}; incr on ${s.keys.toLocaleString("en-US")} counter keys (ctr-<n>, +1 each, no body)`);
  const rounds = await alternate([put, incr], PUT, s, (r) => report.round(r));
  const i = rounds.get(incr.name) ?? [];
  const p = rounds.get(put.name) ?? [];
  report.figure(ratioFigure("incr.ops", "incr / PUT, one node (ops/s)", i, p, ops, "≥ 0.8"));
  report.figure(ratioFigure("incr.cpu", "incr / PUT, one node (CPU per request)", i, p, cpu));
}

/** A lease read that hits (`?lease=10s&wait=2s`) against the plain GET of the same node: the target is within 5%. */
export async function leaseGetPart(s: Settings, report: Report): Promise<void> {
  const lease = { ...node, name: "node GET ?lease", workload: LEASE_GET };
  const plain = { ...node, name: "node GET", workload: GET };
  report.section("lease hit: GET ?lease=10s&wait=2s / GET, one node", `${describe(s)}; every key exists, so every lease read is a hit`);
  const rounds = await alternate([plain, lease], GET, s, (r) => report.round(r));
  const l = rounds.get(lease.name) ?? [];
  const g = rounds.get(plain.name) ?? [];
  report.figure(ratioFigure("lease-get.ops", "lease hit / plain GET, one node (ops/s)", l, g, ops, "≥ 0.95"));
  report.figure(ratioFigure("lease-get.cpu", "lease hit / plain GET, one node (CPU per request)", l, g, cpu, "≤ 1.05"));
}
