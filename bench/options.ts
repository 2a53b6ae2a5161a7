// Command-line options of npm run bench.

/** Every part, in the order they run. */
export const PARTS = ["get", "get-auth", "get-limits", "put", "incr", "lease-get", "p99", "cluster-put", "cluster-get", "cluster-cput", "memory", "browser"] as const;
export type Part = (typeof PARTS)[number];

export interface Options {
  readonly only: ReadonlySet<Part>;
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
  readonly json?: string;
}

export const DEFAULTS = { seconds: 8, rounds: 3, connections: 50 } as const;

export const USAGE =
  "usage: npm run bench -- [--only " + PARTS.join(",") + "] [--seconds N (8)] [--rounds N (3)] [--connections N (50)] [--json FILE]";

function positiveInt(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} needs a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** Parses the arguments after `npm run bench --`; throws with a one-line message on a bad one. */
export function parseOptions(argv: readonly string[]): Options {
  let only: Set<Part> = new Set(PARTS);
  let { seconds, rounds, connections } = DEFAULTS as { seconds: number; rounds: number; connections: number };
  let json: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] as string).split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => (inline !== undefined ? inline : argv[++i]);
    switch (flag) {
      case "--only": {
        const names = (value() ?? "").split(",").filter((x) => x !== "");
        const unknown = names.filter((n) => !(PARTS as readonly string[]).includes(n));
        if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes parts out of ${PARTS.join(",")}; got ${JSON.stringify(unknown.join(",") || "nothing")}`);
        only = new Set(names as Part[]);
        break;
      }
      case "--seconds":
        seconds = positiveInt("seconds", value());
        break;
      case "--rounds":
        rounds = positiveInt("rounds", value());
        break;
      case "--connections":
        connections = positiveInt("connections", value());
        break;
      case "--json": {
        const file = value();
        if (!file) throw new Error("--json needs a file name");
        json = file;
        break;
      }
      default:
        throw new Error(`unknown option ${JSON.stringify(argv[i])}`);
    }
  }
  return { only, seconds, rounds, connections, ...(json !== undefined ? { json } : {}) };
}
