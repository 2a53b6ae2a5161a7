// The soak's command line: --seconds, --rate, --seed, --out, --max-data-bytes. A bad option or
// value is one line and the usage (exit 2), not a stack trace or a run of NaN seconds.
import { parseArgs } from "node:util";

export const SOAK_USAGE = "usage: npm run soak -- [--seconds N (600)] [--rate OPS_PER_S (500)] [--seed N (1)] [--out DIR (soak-out)] [--max-data-bytes SIZE] [--help]";

export interface SoakOptions {
  readonly durationS: number;
  readonly rate: number;
  readonly seed: number;
  readonly out: string;
  /** SERVICE_MAX_DATA_BYTES of every node, as given (the node parses and checks it). */
  readonly maxDataBytes: string | undefined;
}

export type SoakCommand = { kind: "help" } | { kind: "run"; options: SoakOptions };

/** An integer option of at least `min` (digits only: no 1e3, 0x or 1.0), or `fallback` when absent; throws one line. */
export function positiveInteger(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new Error(`--${name} expects an integer of at least ${min}, got ${JSON.stringify(text)}`);
  return n;
}

/** Throws with a one-line message on a bad option or value. */
export function parseSoakOptions(argv: readonly string[]): SoakCommand {
  const { values } = parseArgs({
    args: [...argv],
    options: { seconds: { type: "string" }, rate: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, "max-data-bytes": { type: "string" }, help: { type: "boolean" } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return { kind: "help" };
  if (values.out === "") throw new Error("--out expects a directory");
  return {
    kind: "run",
    options: {
      durationS: positiveInteger("seconds", values.seconds, 600, 30),
      rate: positiveInteger("rate", values.rate, 500, 1),
      seed: positiveInteger("seed", values.seed, 1, 0),
      out: values.out ?? "soak-out",
      maxDataBytes: values["max-data-bytes"],
    },
  };
}
