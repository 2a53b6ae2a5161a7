// Runs the hypercache command in-process with captured streams, a chosen environment and a
// terminal or not; and spawns the built binary for the tests that need a real process.
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Io } from "../src/io.js";
import { main } from "../src/main.js";

export const CLI_BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
  /** stdout parsed as JSON (one document). */
  json<T = Record<string, unknown>>(): T;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** The bytes of standard input, or a stream the test writes to as it goes. */
  stdin?: string | Buffer | Readable;
  tty?: boolean;
  /** Called with a function that simulates Ctrl-C, once the command started. */
  onStart?: (interrupt: () => void) => void;
}

/** Runs `argv` through main() and collects what it printed and its exit code. */
export async function cli(argv: string[], o: CliOptions = {}): Promise<CliRun> {
  const out: Buffer[] = [];
  const err: string[] = [];
  const handlers = new Set<() => void>();
  const source = o.stdin instanceof Readable ? o.stdin : Readable.from(o.stdin === undefined ? [] : [Buffer.from(o.stdin)]);
  const stdin = Object.assign(source, { isTTY: o.tty === true && o.stdin === undefined });
  const io: Io = {
    stdout: { write: (c) => (out.push(Buffer.from(c)), true), isTTY: o.tty === true },
    stderr: { write: (c) => (err.push(String(c)), true), isTTY: false },
    stdin,
    env: o.env ?? {},
    now: () => Date.now(),
    every: (ms, fn) => {
      const t = setInterval(fn, ms);
      return () => clearInterval(t);
    },
    onInterrupt: (fn) => (handlers.add(fn), () => handlers.delete(fn)),
    promptPassword: async () => {
      throw new Error("no prompt in tests");
    },
    exitNow: (code) => {
      throw new Error(`the command asked to exit at once with ${code}`);
    },
  };
  o.onStart?.(() => handlers.forEach((h) => h()));
  const code = await main(argv, io);
  const bytes = Buffer.concat(out);
  return {
    code,
    stdout: bytes.toString("utf8"),
    stdoutBytes: bytes,
    stderr: err.join(""),
    json: <T>() => JSON.parse(bytes.toString("utf8")) as T,
  };
}

/** Runs the built binary as a child process. */
export function cliProcess(argv: string[], o: { env?: Record<string, string>; stdin?: Buffer } = {}): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...argv], { env: { PATH: process.env.PATH ?? "", ...o.env }, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err }));
    child.stdin.end(o.stdin ?? Buffer.alloc(0));
  });
}
