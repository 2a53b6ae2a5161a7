// npm run chaos: fault real hypercache-server processes under a recorded workload and check the
// history. See test/chaos/README.md for the options, the nemeses and what each gate means.
import { randomInt } from "node:crypto";
import { check } from "./checker/check.js";
import { runCommand } from "./net/commands.js";
import { cleanupLeftovers } from "./net/netns.js";
import { NEMESIS_NAMES } from "./nemesis/index.js";
import { renderTable } from "./report/report.js";
import { parseOptions, USAGE, type Command } from "./run/options.js";
import { runChaos } from "./run/run-chaos.js";
import { loadRun } from "./run/saved-run.js";
import { LOCK_PATH } from "./run/run-lock.js";
import { rmSync } from "node:fs";

const print = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  let command: Command;
  try {
    command = parseOptions(process.argv.slice(2), NEMESIS_NAMES, () => randomInt(1, 2 ** 31));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  switch (command.kind) {
    case "help":
      print(USAGE);
      return 0;
    case "cleanup": {
      const removed = await cleanupLeftovers(runCommand);
      rmSync(LOCK_PATH, { force: true });
      print(removed.length === 0 ? "nothing to remove" : `removed: ${removed.join(", ")}`);
      return 0;
    }
    case "check": {
      const verdict = check(loadRun(command.dir), { allowSkip: command.allowSkip });
      print(renderTable(verdict));
      return verdict.passed ? 0 : 1;
    }
    case "run":
      return runChaos(command.options, print);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
