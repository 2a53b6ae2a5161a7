// The hypercache command line: global flags (before or after the command), one sub-command per
// operation, and the mapping of every outcome to an exit code and one stderr line.
import { Command, CommanderError } from "commander";
import type { HypercacheClient } from "@hypercache/client/node";
import { registerDataCommands } from "./commands/data.js";
import { registerClusterCommands } from "./commands/cluster.js";
import { registerLoadCommand } from "./commands/load.js";
import { registerUpdateCommands } from "./commands/updates.js";
import { createClient, DEFAULT_ENDPOINT, type GlobalOptions } from "./context.js";
import { errorLine, EXIT, exitCodeFor } from "./exit-codes.js";
import type { Io } from "./io.js";
import { Output } from "./output.js";

export const VERSION = "0.1.0";

/** What a command's action gets. */
export interface CommandContext<O = Record<string, unknown>> {
  readonly client: HypercacheClient;
  readonly out: Output;
  readonly io: Io;
  readonly opts: O;
  readonly globals: GlobalOptions;
}

/** Wraps an action: builds the client, runs, maps errors; resolves the exit code. */
export type Runner = <O>(fn: (ctx: CommandContext<O>, ...args: string[]) => Promise<number>) => (...args: unknown[]) => Promise<void>;

function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command("hypercache")
    .description("Operate a hypercache-server cluster: read and write keys, browse keys, watch membership, bulk-load items.")
    .version(VERSION)
    .option("-e, --endpoints <urls>", `comma-separated base URLs of client listeners; env HYPERCACHE_ENDPOINTS (default ${DEFAULT_ENDPOINT})`)
    .option("--mgmt-endpoints <urls>", "base URLs of management listeners; env HYPERCACHE_MGMT_ENDPOINTS (default: discovered)")
    .option("-t, --token <token>", "bearer token; env HYPERCACHE_TOKEN")
    .option("-u, --user <name>", "HTTP Basic user; the password comes from HYPERCACHE_PASSWORD or a prompt")
    .option("--insecure-basic", "allow Basic credentials over plain http")
    .option("--trust-discovered", "send the credentials to endpoints discovered on other origins than the given ones")
    .option("--oidc-issuer <url>", "get tokens by OIDC client credentials (secret in HYPERCACHE_CLIENT_SECRET)")
    .option("--insecure-oidc", "allow an http: OIDC issuer (the client secret then travels in clear text)")
    .option("--client-id <id>", "OIDC client id")
    .option("--ca <file>", "PEM CA bundle that signed the nodes' certificates")
    .option("--cert <file>", "PEM client certificate (mTLS)")
    .option("--key <file>", "PEM key of --cert")
    .option("--timeout <duration>", "time limit of one attempt on one endpoint (headers and whole answer), such as 5s")
    .option("--json", "print JSON even on a terminal")
    .option("-v, --verbose", "print each failover and discovery on stderr")
    .showHelpAfterError("(see hypercache --help)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });

  const run: Runner = (fn) => async (...args: unknown[]) => {
    const cmd = args.at(-1) as Command;
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    const out = new Output(io, globals);
    let client: HypercacheClient | undefined;
    try {
      client = await createClient(globals, io, out);
      const positional = args.slice(0, -2) as string[];
      setExit(await fn({ client, out, io, opts: cmd.opts() as never, globals }, ...positional));
    } catch (err) {
      io.stderr.write(`${errorLine(err)}\n`);
      setExit(exitCodeFor(err));
    } finally {
      await client?.close();
    }
  };

  registerDataCommands(program, run);
  registerUpdateCommands(program, run);
  registerClusterCommands(program, run);
  registerLoadCommand(program, run);
  for (const c of program.commands) c.exitOverride().configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });
  return program;
}

/** Runs the command line `argv` (without node and the script) and resolves the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let code: number = EXIT.OK;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: "user" });
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT.USAGE;
    }
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    io.stderr.write(`${errorLine(err)}\n`);
    return exitCodeFor(err);
  }
}
