// The campaign's command line. A bad option or value is one line and the usage (exit 2).
import path from "node:path";
import { parseArgs } from "node:util";
import { positiveInteger as integer } from "../soak/options.js";
import { RUN_KINDS, type CampaignOptions, type RunKind } from "./plan.js";

export const CAMPAIGN_USAGE = `usage: npm run campaign -- [--kinds chaos,fuzz,soak] [--hours H | --runs N] [--seed S]
         [--out campaign-out/] [--stop-on-failure] [--no-build]
         [--chaos-nodes 5] [--fuzz-cases 20000] [--soak-seconds 600]
  Runs chaos (full matrix), fuzz and soak runs one after another, each with a new seed, until
  --hours or --runs is reached or it is stopped (Ctrl-C, SIGTERM); without either it runs until
  stopped. Writes campaign.jsonl (one line per run) and summary.md in --out.`;

export type CampaignCommand = { kind: "help" } | { kind: "run"; options: CampaignOptions };

function kinds(text: string | undefined): RunKind[] {
  if (text === undefined) return [...RUN_KINDS];
  const list = text.split(",").map((k) => k.trim());
  for (const k of list) if (!(RUN_KINDS as readonly string[]).includes(k)) throw new Error(`--kinds: unknown kind ${JSON.stringify(k)} (expected ${RUN_KINDS.join(", ")})`);
  return list as RunKind[];
}

function hours(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const h = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(h > 0) || h > 24 * 365) throw new Error(`--hours expects a positive number of hours, got ${JSON.stringify(text)}`);
  return Math.round(h * 3_600_000);
}

/** Throws with a one-line message on a bad option or value; `randomSeed` picks the base seed when --seed is absent. */
export function parseCampaignOptions(argv: readonly string[], randomSeed: () => number): CampaignCommand {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      kinds: { type: "string" },
      hours: { type: "string" },
      runs: { type: "string" },
      seed: { type: "string" },
      out: { type: "string" },
      "stop-on-failure": { type: "boolean" },
      "no-build": { type: "boolean" },
      "chaos-nodes": { type: "string" },
      "fuzz-cases": { type: "string" },
      "soak-seconds": { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return { kind: "help" };
  if (values.out === "") throw new Error("--out expects a directory");
  if (values.hours !== undefined && values.runs !== undefined) throw new Error("give --hours or --runs, not both");
  return {
    kind: "run",
    options: {
      kinds: kinds(values.kinds),
      baseSeed: integer("seed", values.seed, randomSeed(), 0),
      out: path.resolve(values.out ?? "campaign-out"),
      runs: values.runs === undefined ? undefined : integer("runs", values.runs, 1, 1),
      durationMs: hours(values.hours),
      stopOnFailure: values["stop-on-failure"] === true,
      build: values["no-build"] !== true,
      chaosNodes: integer("chaos-nodes", values["chaos-nodes"], 5, 3),
      fuzzCases: integer("fuzz-cases", values["fuzz-cases"], 20_000, 1),
      soakSeconds: integer("soak-seconds", values["soak-seconds"], 600, 30),
    },
  };
}
