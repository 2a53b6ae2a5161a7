// Runs the system commands the network layer needs (ip, nft), with stdin and a clear error.
import { spawn } from "node:child_process";

export interface CommandResult {
  stdout: string;
  stderr: string;
}

export type CommandRunner = (command: string, args: readonly string[], input?: string) => Promise<CommandResult>;

/** Runs a command to completion; rejects with its stderr when it exits non-zero. */
export const runCommand: CommandRunner = (command, args, input) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr.trim()}`));
    });
    if (child.stdin) {
      // a command that exits without reading its input must not crash the harness (EPIPE)
      child.stdin.on("error", () => undefined);
      child.stdin.end(input);
    }
  });
