// What the command reads and writes, passed in so tests run it in-process: the standard streams,
// the environment, the clock, timers, interruption (Ctrl-C) and the password prompt.
import { stdin as processStdin } from "node:process";
import type { Readable, Writable } from "node:stream";
import { EXIT, InterruptedError, UsageError } from "./exit-codes.js";

export interface OutStream {
  write(chunk: string | Uint8Array): boolean;
  readonly isTTY?: boolean;
}

export interface Io {
  readonly stdout: OutStream & Partial<Pick<Writable, "once">>;
  readonly stderr: OutStream;
  readonly stdin: Readable & { readonly isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Milliseconds, for rates and the summary. */
  now(): number;
  /** Calls `fn` every `ms` until the returned function is called. */
  every(ms: number, fn: () => void): () => void;
  /** Calls `fn` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt(fn: () => void): () => void;
  /** Reads a password without echo (only when stdin is a terminal). */
  promptPassword(prompt: string): Promise<string>;
  /** Ends the process at once (a second Ctrl-C). */
  exitNow(code: number): void;
}

/**
 * Reads a line from the terminal with echo off: Enter ends it, Ctrl-D too (at an empty prompt: a
 * UsageError, no password), Ctrl-C rejects with an InterruptedError (exit code 130).
 */
function readPassword(prompt: string, stderr: OutStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const input = processStdin;
    if (!input.isTTY) return reject(new Error("no terminal to ask for the password on"));
    stderr.write(prompt);
    let value = "";
    input.setRawMode(true);
    input.resume();
    input.setEncoding("utf8");
    const done = (err?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off("data", onData);
      stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done();
        // Raw mode: Ctrl-C and Ctrl-D arrive as characters, not as SIGINT and end of input.
        if (ch === "\u0003") return done(new InterruptedError("interrupted"));
        // Ctrl-D ends the input, as on a terminal line: after some text it ends the password; at an
        // empty prompt there is no password, and nothing is sent.
        if (ch === "\u0004") return value === "" ? done(new UsageError("no password given (Ctrl-D at the prompt)")) : done();
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    input.on("data", onData);
  });
}

/**
 * What a failed write to stdout does. Once its reader is gone (EPIPE: `hypercache watch | head -1`)
 * the command exits 0 without a message, as a command in a pipeline is expected to; any other
 * failure (ENOSPC: a full disk) is one line, `hypercache: stdout: <message>`, and exit code 2, as
 * for an --out file that cannot be written (no stack trace).
 */
export function exitOnStdoutError(stdout: NodeJS.WriteStream, stderr: OutStream, exit: (code: number) => void): (err: Error) => void {
  const failed = (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") return exit(EXIT.OK);
    stderr.write(`hypercache: stdout: ${err.message}\n`);
    exit(EXIT.USAGE);
  };
  stdout.on("error", failed);
  // Also for a write's callback, which learns of the failure before the 'error' event.
  return (err) => failed((stdout.errored ?? err) as NodeJS.ErrnoException);
}

/** A failed write to stderr (its reader gone, a full disk) loses the message, not the exit code. */
export function ignoreWriteErrors(stream: NodeJS.WriteStream): void {
  stream.on("error", () => undefined);
}

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    now: () => Date.now(),
    every(ms, fn) {
      const t = setInterval(fn, ms);
      t.unref();
      return () => clearInterval(t);
    },
    onInterrupt(fn) {
      process.on("SIGINT", fn);
      return () => process.off("SIGINT", fn);
    },
    promptPassword: (prompt) => readPassword(prompt, process.stderr),
    exitNow: (code) => process.exit(code),
  };
}
