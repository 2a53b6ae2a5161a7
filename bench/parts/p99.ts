// GET p99 of one node at half of its peak GET rate, open loop (h2load at a fixed request rate;
// see bench/h2load.ts for why and how), the peak measured with wrk earlier in the same run.
import { randomInt } from "node:crypto";
import { RATE_KEPT_MIN, runH2load, SEND_INTERVAL_MS } from "../h2load.js";
import { preload } from "../http.js";
import { alternate, GET, type RoundResult, type Settings } from "../measure.js";
import { fmt, type Report } from "../report.js";
import { median } from "../stats.js";
import { runWrk } from "../wrk.js";
import type { Side } from "../measure.js";
import { ceiling, GENERATOR_CORE, node } from "./sides.js";

/** The fixed rate, as a share of the peak GET rate. */
const SHARE_OF_PEAK = 0.5;

/** `peakRounds`: the node's GET rounds of this run, if the GET part measured them. */
export async function p99Part(peakRounds: readonly RoundResult[] | undefined, s: Settings, report: Report): Promise<void> {
  let rounds = peakRounds;
  if (!rounds) {
    report.section("p99: peak GET rate of one node first", `wrk -t1 -c${s.connections} on core 1, node on core 0, ${s.rounds} rounds`);
    rounds = (await alternate([node], GET, s, (r) => report.round(r))).get(node.name) as RoundResult[];
  }
  const peak = median(rounds.map((r) => r.opsPerSec));
  const rate = Math.round(peak * SHARE_OF_PEAK);
  report.fact("p99PeakOpsPerSec", peak);
  report.section(
    `p99: GET of one node at ${fmt(rate)} req/s, half of its peak ${fmt(peak)} ops/s (median of this run's wrk rounds)`,
    `open loop with h2load --h1 --rps (wrk only keeps N requests in flight, so a slow answer would slow the load and hide itself); ` +
      `p99 from h2load's per-request log, counting each request that may have left late (after an answer slower than the send interval) as slower than every answer; ` +
      `each connection sends every ${SEND_INTERVAL_MS} ms, connections start spread over that interval; valid when h2load sent at least ${fmt(100 * RATE_KEPT_MIN)}% of the planned rate; ` +
      `fresh node per round on core 0, h2load on core 1, ${s.warmupSeconds} s warm-up (wrk, then the log's first ${s.warmupSeconds} s) and ${s.seconds} s measured`,
  );
  // The ceiling (bare node:http + Map) takes the same schedule in alternate rounds: what this
  // harness and machine let any Node server reach, so the node's figure can be read against it.
  const sides: Array<{ side: Side; p99s: number[]; valid: boolean }> = [node, ceiling].map((side) => ({ side, p99s: [], valid: true }));
  const perRound: unknown[] = [];
  for (let round = 1; round <= s.rounds; round++) {
    for (const entry of sides) {
      const target = await entry.side.start();
      try {
        await preload(target.port, s.keys, s.valueBytes);
        await runWrk({ port: target.port, workload: GET, keys: s.keys, valueBytes: s.valueBytes, connections: s.connections, seconds: s.warmupSeconds, placement: GENERATOR_CORE }, s.hz);
        const r = await runH2load(
          { port: target.port, rate, seconds: s.seconds, warmupSeconds: s.warmupSeconds, keys: s.keys, placement: GENERATOR_CORE, random: () => randomInt(2 ** 32) / 2 ** 32 },
          s.hz,
        );
        const failures = r.summary.failed + r.summary.errored + r.summary.timeout + r.non2xx;
        const kept = r.ratePerSec >= RATE_KEPT_MIN * r.plan.rate;
        const bounded = Number.isFinite(r.p99BoundMs);
        const roundValid = failures === 0 && kept && bounded;
        entry.valid &&= roundValid;
        // Unbounded (more than 1% may have left late): the log's p99, and the figure is not valid.
        entry.p99s.push(bounded ? r.p99BoundMs : r.p99Ms);
        perRound.push({ side: entry.side.name, round, ...r, valid: roundValid });
        report.line(
          `  round ${round}  ${entry.side.name.padEnd(8)} ${r.plan.clients} connections × ${r.plan.rpsPerClient} req/s: ${fmt(r.ratePerSec)} req/s sent (${fmt(r.requests)} measured)  ` +
            `p50 ${fmt(r.p50Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  max ${fmt(r.maxMs, 2)} ms  load gen. CPU ${fmt(100 * r.generatorCpuShare)}%` +
            (r.mayHaveLeftLate > 0
              ? `  ${fmt(r.slowerThanInterval)} answers slower than ${fmt(r.plan.intervalMs)} ms, ${fmt(r.mayHaveLeftLate)} requests may have left late: p99 bound ${bounded ? `${fmt(r.p99BoundMs, 2)} ms` : "none (more than 1%)"}`
              : "") +
            (failures > 0 ? `  ERRORS ${failures}` : "") +
            (kept ? "" : `  RATE NOT KEPT (planned ${fmt(r.plan.rate)})`),
        );
      } finally {
        await target.stop();
      }
    }
  }
  report.fact("p99Rounds", perRound);
  const [own, base] = sides as [(typeof sides)[0], (typeof sides)[0]];
  report.figure({ id: "p99.get", label: "GET p99 at half of peak rate (open loop; late-sent requests counted as slowest)", value: median(own.p99s), unit: "ms", min: Math.min(...own.p99s), max: Math.max(...own.p99s), target: "≤ 2 ms", valid: own.valid });
  report.figure({ id: "p99.ceiling", label: "  the ceiling's GET p99 at the same rate (same harness: what it allows)", value: median(base.p99s), unit: "ms", min: Math.min(...base.p99s), max: Math.max(...base.p99s), valid: base.valid });
}
