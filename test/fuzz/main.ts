// npm run fuzz: requests generated from the OpenAPI documents, mutated, sent over raw sockets to
// one real node; the peer listener gets junk around the HTTP/2 preface, broken Connect calls and
// compression bombs; HTTP/2 streams on the Exchange path carry random, cut and lying envelopes
// (stream-arbitrary.ts, judged by stream-oracle.ts). Every answer must be a documented status
// with the JSON envelope (Connect's own error on the dist listener), never a 500 and never a hang; the process stays up, its retained memory (RSS less garbage awaiting a collection) comes back within 50 MB of the baseline and the
// canary keys are unchanged. Failing cases are shrunk by fast-check and saved in test/fuzz/corpus/.
//
//   npm run fuzz -- [--cases 2000] [--seed S] [--path P --family F]   random cases
//   npm run fuzz -- --corpus                                          replay the saved corpus only
import { randomInt } from "node:crypto";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import fc from "fast-check";
import { bombs } from "./bombs.js";
import { distCaseArb, operationCaseArb } from "./case-arbitraries.js";
import { loadCorpus, saveEntry } from "./corpus.js";
import { describe as describeCase, type FuzzCase, type HttpCase } from "./fuzz-case.js";
import { loadOperations, type Operation } from "./openapi-model.js";
import { streamCaseArb } from "./stream-arbitrary.js";
import { failureSignature } from "./oracle.js";
import { runCase, type CaseJudge } from "./run-case.js";
import { FuzzTarget, TOKENS } from "./target-node.js";
import { parsePrometheus } from "../integration/observability-helpers.js";
import { memoryFigures, retainedBytes } from "../soak/gates.js";

const OPENAPI = (name: string) => fileURLToPath(new URL(`../../openapi/${name}`, import.meta.url));
/** Retained memory may grow by this much over the run, beyond the value bytes the cases stored. */
export const RSS_ALLOWANCE_BYTES = 50 * 1024 * 1024;
const HEALTH_EVERY = 250;
const PROGRESS_EVERY = 2_000;
const BOMB_TIMEOUT_MS = 60_000;

const print = (line: string) => process.stdout.write(`${line}\n`);

interface Family {
  name: string;
  share: number;
  arb: fc.Arbitrary<FuzzCase>;
}

/** The node's /metrics, parsed; undefined when it cannot be read. */
async function nodeMetrics(target: FuzzTarget): Promise<ReturnType<typeof parsePrometheus> | undefined> {
  try {
    return parsePrometheus(await (await fetch(`http://127.0.0.1:${target.port("mgmt")}/metrics`, { headers: { Authorization: `Bearer ${TOKENS.admin}` } })).text());
  } catch {
    return undefined;
  }
}

/** Where the node's memory sits (its /metrics runtime gauges), to tell heap from Buffers from malloc. */
async function memoryBreakdown(target: FuzzTarget): Promise<string> {
  const metrics = await nodeMetrics(target);
  if (metrics === undefined) return "unavailable";
  const mibOf = (name: string) => {
    const v = metrics.value(name);
    return v === undefined ? "?" : `${(v / 1048576).toFixed(0)} MiB`;
  };
  return (
    `heap used ${mibOf("v8js_memory_heap_used_bytes")}, live ${mibOf("v8js_memory_heap_live_bytes")}, committed ${mibOf("v8js_memory_heap_committed_bytes")}; ` +
    `external ${mibOf("nodejs_memory_external_bytes")}; Buffers ${mibOf("nodejs_memory_array_buffers_bytes")}, live ${mibOf("nodejs_memory_array_buffers_live_bytes")}`
  );
}

/**
 * The node's memory now: RSS, and retained memory as the soak judges it (RSS less the garbage
 * waiting for a collection, in the V8 heap and in Buffers: test/soak/gates.ts, retainedBytes).
 */
async function memoryNow(target: FuzzTarget): Promise<{ rss: number; retained: number }> {
  const rss = target.rssBytes();
  const metrics = await nodeMetrics(target);
  return { rss, retained: retainedBytes({ node: "fuzz", t_s: 0, rss_bytes: rss, ...(metrics === undefined ? {} : memoryFigures(metrics)) }) };
}

/**
 * Retained-memory growth over the baseline, less the value bytes the cases stored (legitimate
 * data, not a leak), after waiting up to 60 s for it to come down within the allowance. Judged
 * on retained memory rather than RSS: V8 gives the free pages of its heap back only when its
 * memory reducer runs, tens of seconds after the load, and sometimes not within the minute
 * (campaign seed 60001, 2026-11-30: 64 MiB of heap committed with 38 in use, RSS 70 MiB over the
 * allowance's base; the same seed again: RSS back within 16 MiB).
 */
async function settleMemory(target: FuzzTarget, baseline: Baseline): Promise<{ rss: number; retained: number; stored: number; growth: number }> {
  const measure = async () => {
    const now = await memoryNow(target);
    const stored = Math.max(0, (await target.stats()).bytes - baseline.bytes);
    return { ...now, stored, growth: now.retained - baseline.retained - stored };
  };
  let m = await measure();
  for (let i = 0; i < 30 && m.growth > RSS_ALLOWANCE_BYTES; i++) {
    await new Promise((r) => setTimeout(r, 2000));
    m = await measure();
  }
  return m;
}

interface Baseline {
  rss: number;
  retained: number;
  bytes: number;
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;

async function runBombs(j: CaseJudge, failures: string[]): Promise<void> {
  for (const bomb of await bombs()) {
    const targets: [HttpCase["listener"], string, string][] = [
      ["dist", "/internal/hypercache.peer.v1.PeerService/Set", TOKENS.peer],
      ["dist", "/internal/hypercache.peer.v1.PeerService/Gossip", TOKENS.peer],
      ["client", "/v1/cache/batch/put", TOKENS.readWrite],
    ];
    for (const [listener, target, token] of targets) {
      const c: HttpCase = {
        kind: "http",
        listener,
        ...(listener === "client" ? { operation: "client POST /v1/cache/batch/put" } : {}),
        method: "POST",
        target,
        headers: [["Authorization", `Bearer ${token}`], ["Content-Type", "application/json"], ["Content-Encoding", "gzip"]],
        body: bomb.gzip.toString("base64"),
        framing: "length",
        mutations: [`gzip-bomb-${bomb.name}`],
      };
      const t0 = performance.now();
      const { problems, status } = await runCase(j, c, BOMB_TIMEOUT_MS);
      const took = Math.round(performance.now() - t0);
      // RSS is gated once, after the whole run; here it is only reported
      print(`bomb ${bomb.name} (${bomb.gzip.length} bytes) → ${listener} ${target}: ${status ?? "no answer"} in ${took} ms, node RSS ${mib(j.target.rssBytes())}${problems.length === 0 ? "" : `: ${problems.join("; ")}`}`);
      if (problems.length > 0) {
        const file = saveEntry({ problems, family: "bomb", seed: 0, path: "", found: new Date().toISOString(), case: c });
        failures.push(`bomb ${bomb.name} → ${target}: ${problems.join("; ")} (saved ${file})`);
      }
    }
  }
}

/** How many distinct failures one family may report before it stops looking. */
const MAX_FAILURES_PER_FAMILY = 6;

/**
 * Runs a family's cases; after a failure (shrunk and saved) it goes on with the cases left and a
 * new seed, counting cases that fail the same way (same signature) as known instead of stopping.
 */
async function runFamily(j: CaseJudge, family: Family, numRuns: number, seed: number, path: string | undefined, failures: string[]): Promise<void> {
  const known = new Map<string, number>();
  let done = 0;
  for (let round = 0; done < numRuns && known.size < MAX_FAILURES_PER_FAMILY; round++) {
    const roundSeed = seed + round * 1_000_003;
    let n = 0;
    const property = fc
      .asyncProperty(family.arb, async (c) => {
        const { problems } = await runCase(j, c);
        if (++n % HEALTH_EVERY === 0) {
          const h = await j.target.healthz();
          if (h) problems.push(`after ${n} cases: ${h}`);
        }
        if (n % PROGRESS_EVERY === 0 && j.target.alive) print(`${family.name}: ${done + n} cases, node RSS ${mib(j.target.rssBytes())}`);
        if (problems.length === 0) return;
        const sig = failureSignature(c, problems);
        if (known.has(sig)) {
          known.set(sig, (known.get(sig) ?? 0) + 1);
          return;
        }
        throw new Error(problems.join("; "));
      })
      .beforeEach(() => j.target.ensureUp());
    const t0 = performance.now();
    const details = await fc.check(property, { seed: roundSeed, numRuns: numRuns - done, ...(path && round === 0 ? { path } : {}), verbose: 0 });
    const took = ((performance.now() - t0) / 1000).toFixed(1);
    if (!details.failed) {
      done = numRuns;
      print(`${family.name}: ${round === 0 ? details.numRuns : `${details.numRuns} more`} cases passed in ${took} s (seed ${roundSeed})`);
      break;
    }
    done += details.numRuns;
    const c = details.counterexample?.[0] as FuzzCase | undefined;
    const problems = [(details.errorInstance as Error | undefined)?.message ?? String(details.errorInstance)];
    if (c) known.set(failureSignature(c, problems), 1);
    const file = c ? saveEntry({ problems, family: family.name, seed: roundSeed, path: details.counterexamplePath ?? "", found: new Date().toISOString(), case: c }) : "(no counterexample)";
    const line = `${family.name}: FAILED at case ${details.numRuns} (${details.numShrinks} shrinks, ${took} s): ${c ? describeCase(c) : "?"}: ${problems.join("; ")}`;
    print(line);
    print(`  saved ${file}; replay: npm run fuzz -- --family ${family.name} --seed ${roundSeed} --path ${details.counterexamplePath} --cases ${numRuns - done + details.numRuns}`);
    failures.push(line);
  }
  const repeats = [...known.entries()].filter(([, n]) => n > 1).map(([sig, n]) => `${sig} ×${n}`);
  if (repeats.length > 0) print(`${family.name}: known failures seen again: ${repeats.join(", ")}`);
}

async function replayCorpus(j: CaseJudge): Promise<string[]> {
  const failures: string[] = [];
  for (const { file, entry } of loadCorpus()) {
    const { problems } = await runCase(j, entry.case, entry.family === "bomb" ? BOMB_TIMEOUT_MS : undefined);
    print(`${file}: ${problems.length === 0 ? "passes now" : `still fails: ${problems.join("; ")}`}`);
    if (problems.length > 0) failures.push(file);
  }
  return failures;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      cases: { type: "string" },
      seed: { type: "string" },
      path: { type: "string" },
      family: { type: "string" },
      corpus: { type: "boolean" },
      "skip-bombs": { type: "boolean" },
      // CI: the RSS check is printed but does not fail the run (see README, "Fuzz").
      "rss-report-only": { type: "boolean" },
    },
  });
  const cases = Number(values.cases ?? 2000);
  const seed = values.seed !== undefined ? Number(values.seed) : randomInt(1, 2 ** 31);
  const client = loadOperations(OPENAPI("client.yaml"), "client");
  const mgmt = loadOperations(OPENAPI("management.yaml"), "mgmt");
  const operations = new Map<string, Operation>([...client, ...mgmt].map((o) => [o.id, o]));
  const allDocumented = [...new Set([...operations.values()].flatMap((o) => o.statuses))];
  const target = await FuzzTarget.start();
  const j: CaseJudge = { target, operations, allDocumented };
  const failures: string[] = [];
  try {
    if (values.corpus) {
      const still = await replayCorpus(j);
      print(`corpus: ${still.length} of ${loadCorpus().length} entries still fail`);
      return still.length === 0 ? 0 : 1;
    }
    await target.writeCanaries();
    await new Promise((r) => setTimeout(r, 1000));
    const baseline: Baseline = { ...(await memoryNow(target)), bytes: (await target.stats()).bytes };
    print(`fuzz seed=${seed} cases=${cases}; target RSS baseline ${mib(baseline.rss)}, retained ${mib(baseline.retained)}`);
    if (!values["skip-bombs"] && !values.path) await runBombs(j, failures);
    const families: Family[] = [
      { name: "client", share: 0.5, arb: operationCaseArb(client, "client", TOKENS) },
      { name: "mgmt", share: 0.2, arb: operationCaseArb(mgmt, "mgmt", TOKENS) },
      { name: "dist", share: 0.3, arb: distCaseArb(TOKENS) },
      // on top of the others: HTTP/2 streams on the Exchange path (the nodes' own, and Connect's)
      { name: "exchange", share: 0.15, arb: streamCaseArb(TOKENS) },
    ];
    for (const [i, family] of families.entries()) {
      if (values.family && values.family !== family.name) continue;
      await runFamily(j, family, Math.max(1, Math.round(cases * family.share)), seed + i, values.family ? values.path : undefined, failures);
    }
    const health = await target.healthz();
    if (health) failures.push(`after the run: ${health}`);
    if (target.restarts > 0) failures.push(`the node was restarted ${target.restarts} times (a case killed it)`);
    const changed = await target.changedCanaries();
    if (changed.length > 0) failures.push(`canary keys changed: ${changed.join("; ")}`);
    const m = await settleMemory(target, baseline);
    const stats = await target.stats();
    print(
      `retained memory ${mib(m.retained)} after the run (baseline ${mib(baseline.retained)}; RSS ${mib(m.rss)}, baseline ${mib(baseline.rss)}); ` +
        `the cases stored ${mib(m.stored)} of values (${stats.items} items): growth beyond them ${mib(m.growth)} (allowance 50 MB)`,
    );
    print(`node memory: ${await memoryBreakdown(target)}`);
    if (m.growth > RSS_ALLOWANCE_BYTES) {
      const problem = `retained memory did not return within 50 MB of the baseline: ${mib(m.retained)} (RSS ${mib(m.rss)}), ${mib(m.stored)} of it stored values`;
      if (values["rss-report-only"]) print(`REPORTED (not gated with --rss-report-only): ${problem}`);
      else failures.push(problem);
    }
    const logs = target.errorLogs();
    if (logs.length > 0) failures.push(`${logs.length} error log records or stderr lines, first: ${logs[0]?.slice(0, 300)}`);
  } finally {
    await target.stop();
  }
  if (failures.length > 0) {
    print(`FAILED (seed ${seed}):`);
    for (const f of failures) print(`  - ${f}`);
    return 1;
  }
  print(`passed: seed ${seed}, ${cases} cases`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
