// GET p99 of one node at half of its peak GET rate, open loop (bench/openloop.c at a fixed
// request rate, latency from when each request was due), the peak measured with wrk earlier in
// the same run.
import { randomInt } from "node:crypto";
import { buildOpenLoop, runOpenLoop } from "../openloop.js";
import { preload } from "../http.js";
import { alternate, GET, type RoundResult, type Settings, type Side } from "../measure.js";
import { cpuMicrosBetween, cpuTicks } from "../proc.js";
import { fmt, GENERATOR_SHARE_MAX, type Figure, type Report } from "../report.js";
import { median } from "../stats.js";
import { runWrk } from "../wrk.js";
import { ceiling, GENERATOR_CORE, node } from "./sides.js";

/** The fixed rate, as a share of the peak GET rate. */
const SHARE_OF_PEAK = 0.5;

interface SideRounds {
  readonly side: Side;
  readonly p99s: number[];
  valid: boolean;
}

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
    `open loop with bench/openloop.c (wrk only keeps N requests in flight, so a slow answer would slow the load and hide itself): ` +
      `request s is due at s / rate on connection s mod ${s.connections}, sent when due or, if its connection still waits, as soon as the answer arrives, ` +
      `and its latency runs from when it was due (a wait behind a slow answer counts); ` +
      `fresh node per round on core 0, the generator on core 1, ${s.warmupSeconds} s warm-up (wrk, then the generator's first ${s.warmupSeconds} s) and ${s.seconds} s measured`,
  );
  const bin = buildOpenLoop();
  // The ceiling (bare node:http + Map) takes the same schedule in alternate rounds: what this
  // harness and machine let any Node server reach, so the node's figure can be read against it.
  const own: SideRounds = { side: node, p99s: [], valid: true };
  const base: SideRounds = { side: ceiling, p99s: [], valid: true };
  const sides = [own, base];
  const perRound: unknown[] = [];
  for (let round = 1; round <= s.rounds; round++) {
    for (const entry of sides) {
      const target = await entry.side.start();
      try {
        await preload(target.port, s.keys, s.valueBytes);
        await runWrk({ port: target.port, workload: GET, keys: s.keys, valueBytes: s.valueBytes, connections: s.connections, seconds: s.warmupSeconds, placement: GENERATOR_CORE }, s.hz);
        const cpu0 = cpuTicks(target.entryPid);
        const t0 = performance.now();
        const r = await runOpenLoop(
          bin,
          { port: target.port, rate, connections: s.connections, seconds: s.seconds, warmupSeconds: s.warmupSeconds, keys: s.keys, placement: GENERATOR_CORE, seed: randomInt(2 ** 31) },
          s.hz,
        );
        // Server CPU over the whole run (warm-up included), per request of the run.
        const cpuUs = cpuMicrosBetween(cpu0, cpuTicks(target.entryPid), s.hz);
        const elapsedS = (performance.now() - t0) / 1000;
        const serverShare = cpuUs / (elapsedS * 1e6);
        const requests = rate * (s.seconds + s.warmupSeconds);
        // Every request due in the window answered 2xx, or the round does not count.
        const failures = r.errors + r.timeouts + r.unsent + r.non2xx + r.reconnects + (r.due - r.answered);
        const generatorFree = r.generatorCpuShare <= GENERATOR_SHARE_MAX;
        const roundValid = failures === 0 && generatorFree;
        entry.valid &&= roundValid;
        entry.p99s.push(r.p99Ms);
        perRound.push({ side: entry.side.name, round, ...r, serverCpuUsPerRequest: cpuUs / requests, serverCpuShare: serverShare, valid: roundValid });
        report.line(
          `  round ${round}  ${entry.side.name.padEnd(8)} ${fmt(r.answered)} answered of ${fmt(r.due)} due  ` +
            `p50 ${fmt(r.p50Ms, 2)} ms  p90 ${fmt(r.p90Ms, 2)} ms  p99 ${fmt(r.p99Ms, 2)} ms  p99.9 ${fmt(r.p999Ms, 2)} ms  max ${fmt(r.maxMs, 2)} ms  ` +
            `server CPU ${fmt(cpuUs / requests, 1)} µs/req (${fmt(100 * serverShare)}% of its core)  load gen. CPU ${fmt(100 * r.generatorCpuShare)}%` +
            (generatorFree ? "" : `  LOAD GENERATOR BUSY (over ${fmt(100 * GENERATOR_SHARE_MAX)}% of its core)`) +
            (failures > 0 ? `  ERRORS ${failures} (errors ${r.errors}, timeouts ${r.timeouts}, unsent ${r.unsent}, non-2xx ${r.non2xx}, reconnects ${r.reconnects})` : ""),
        );
      } finally {
        await target.stop();
      }
    }
  }
  report.fact("p99Rounds", perRound);
  const ceilingP99 = median(base.p99s);
  // When the bare ceiling misses the target on the same schedule, the harness and machine decide it.
  const note = ceilingP99 > P99_TARGET_MS ? `(the ceiling misses ${fmt(P99_TARGET_MS)} ms too on this harness: ${fmt(ceilingP99, 2)} ms)` : undefined;
  report.figure({ ...p99Figure("p99.get", "GET p99 at half of peak rate (open loop, latency from when each request was due)", own), target: `≤ ${P99_TARGET_MS} ms`, ...(note ? { note } : {}) });
  report.figure(p99Figure("p99.ceiling", "  the ceiling's GET p99 at the same rate (same harness: what it allows)", base));
}

const P99_TARGET_MS = 2;

function p99Figure(id: string, label: string, rounds: SideRounds): Figure {
  return { id, label, value: median(rounds.p99s), unit: "ms", min: Math.min(...rounds.p99s), max: Math.max(...rounds.p99s), valid: rounds.valid };
}
