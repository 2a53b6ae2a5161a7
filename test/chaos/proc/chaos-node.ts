// One real hypercache-server process under the harness: started inside its namespace (or on
// loopback), optionally with a skewed clock (libfaketime), stopped by signals. Its stdout goes to
// logs/<id>.log and stderr to logs/<id>.stderr.log; error records and stderr lines become log
// findings; every start and exit is an event, marked expected when the harness caused it.
// A node may run under valgrind memcheck (`--valgrind <id>`): its log goes to
// logs/<id>.valgrind.<pid>.log, and a run that reports errors is a stderr finding when it exits.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync, type WriteStream } from "node:fs";
import path from "node:path";
import type { LogFinding, ProcessEvent } from "../checker/history.js";
import { nowMs, type Endpoint } from "../workload/cache-client.js";

/** libfaketime, as Debian's `faketime` package installs it (the multi-threaded build: Node has threads). */
export const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
const READY_MESSAGE = "client API listener started";
const START_TIMEOUT_MS = 30_000;
const TERM_TIMEOUT_MS = 45_000;
/** How much longer a node under valgrind gets to start and to stop (it runs 20-50 times slower). */
const VALGRIND_SLOWDOWN = 5;
const VALGRIND_ARGS = ["--tool=memcheck", "--smc-check=all-non-file", "--undef-value-errors=no", "--error-limit=no", "--num-callers=40"];

export interface NodeSpec extends Endpoint {
  mgmtPort: number;
  distPort: number;
  /** The network namespace to run in; undefined on loopback. */
  netns?: string;
}

export interface NodeDeps {
  bin: string;
  logDir: string;
  /** Environment shared by every node (SERVICE_* settings). */
  env: Record<string, string>;
  /** The id of the node that runs under valgrind memcheck, if any. */
  valgrind?: string;
  onProcess(e: ProcessEvent): void;
  onLog(e: LogFinding): void;
}

export interface StartOptions {
  seeds: string;
  /** A libfaketime offset such as "+30s": the node's wall clock runs that far ahead. */
  clockOffset?: string;
}

export class ChaosNode {
  private child: ChildProcess | undefined;
  private exitExpected = false;
  private exitPromise: Promise<{ code: number | null; signal: string | null }> | undefined;
  private readonly stdoutLog: WriteStream;
  private readonly stderrLog: WriteStream;
  /** True once the process was started (clients learn of a node only then). */
  everStarted = false;
  /** The skew the running process was started with. */
  clockOffset: string | undefined;

  constructor(
    readonly spec: NodeSpec,
    private readonly deps: NodeDeps,
  ) {
    this.stdoutLog = createWriteStream(path.join(deps.logDir, `${spec.id}.log`), { flags: "a" });
    this.stderrLog = createWriteStream(path.join(deps.logDir, `${spec.id}.stderr.log`), { flags: "a" });
  }

  get id(): string {
    return this.spec.id;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process and waits for its client listener. */
  async start(opts: StartOptions): Promise<void> {
    if (this.child) throw new Error(`${this.id} is already running`);
    const { spec } = this;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      ...this.deps.env,
      SERVICE_NODE_ID: spec.id,
      SERVICE_API_ADDR: `${spec.host}:${spec.apiPort}`,
      SERVICE_MGMT_ADDR: `${spec.host}:${spec.mgmtPort}`,
      SERVICE_DIST_ADDR: `${spec.host}:${spec.distPort}`,
      SERVICE_SEEDS: opts.seeds,
    };
    if (opts.clockOffset) {
      env.LD_PRELOAD = LIBFAKETIME;
      env.FAKETIME = opts.clockOffset;
      // Timers and performance.now() use the monotonic clock: only the wall clock is skewed.
      env.FAKETIME_DONT_FAKE_MONOTONIC = "1";
    }
    this.clockOffset = opts.clockOffset;
    const valgrindLog = path.join(this.deps.logDir, `${spec.id}.valgrind.%p.log`);
    const node = this.underValgrind ? ["valgrind", ...VALGRIND_ARGS, `--log-file=${valgrindLog}`, process.execPath, this.deps.bin] : [process.execPath, this.deps.bin];
    const [cmd, args] = spec.netns ? ["ip", ["netns", "exec", spec.netns, ...node]] : [node[0] as string, node.slice(1)];
    const child = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    this.everStarted = true;
    this.exitExpected = false;
    this.stdoutLog.write(`{"harness":"start","t_ms":${nowMs()},"clock_offset":${JSON.stringify(opts.clockOffset ?? null)}}\n`);
    this.deps.onProcess({ node: spec.id, t_ms: nowMs(), action: "start", expected: true });
    let ready: () => void = () => undefined;
    const readyPromise = new Promise<void>((resolve) => (ready = resolve));
    this.pipeLines(child, ready);
    this.exitPromise = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.child = undefined;
        const expected = this.exitExpected && (signal === "SIGKILL" || code === 0);
        this.deps.onProcess({ node: spec.id, t_ms: nowMs(), action: "exit", expected, code, signal });
        if (this.underValgrind && child.pid !== undefined) this.reportValgrind(valgrindLog.replace("%p", String(child.pid)));
        resolve({ code, signal });
      });
    });
    const exited = this.exitPromise.then(({ code, signal }) => {
      throw new Error(`${spec.id} exited (${code ?? signal}) before it was ready`);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const ms = this.slowdown * START_TIMEOUT_MS;
      timer = setTimeout(() => reject(new Error(`${spec.id} not ready within ${ms} ms`)), ms);
    });
    try {
      await Promise.race([readyPromise, exited, timeout]);
    } finally {
      clearTimeout(timer);
      exited.catch(() => undefined);
    }
  }

  private get underValgrind(): boolean {
    return this.deps.valgrind === this.spec.id;
  }

  private get slowdown(): number {
    return this.underValgrind ? VALGRIND_SLOWDOWN : 1;
  }

  /**
   * Reads a valgrind log once its process has exited (`ip netns exec` runs valgrind itself, so the
   * child's pid is valgrind's) and reports its errors as a stderr finding.
   */
  private reportValgrind(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return;
    }
    const errors = Number(/ERROR SUMMARY: (\d+) errors/.exec(text)?.[1] ?? 0);
    const first = /==\d+== (Invalid [^\n]*)/.exec(text)?.[1];
    if (errors > 0) this.deps.onLog({ node: this.id, t_ms: nowMs(), source: "stderr", text: `valgrind: ${errors} errors (${first ?? "see the log"}) in ${path.basename(file)}` });
  }

  private pipeLines(child: ChildProcess, ready: () => void): void {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdoutLog.write(chunk);
      out += chunk;
      let nl: number;
      while ((nl = out.indexOf("\n")) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        this.inspectLine(line, ready);
      }
    });
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderrLog.write(chunk);
      err += chunk;
      let nl: number;
      while ((nl = err.indexOf("\n")) >= 0) {
        const line = err.slice(0, nl);
        err = err.slice(nl + 1);
        if (line.trim() !== "") this.deps.onLog({ node: this.id, t_ms: nowMs(), source: "stderr", text: line });
      }
    });
  }

  private inspectLine(line: string, ready: () => void): void {
    let record: { level?: string; message?: string };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      if (line.trim() !== "") this.deps.onLog({ node: this.id, t_ms: nowMs(), source: "log", text: `not a JSON record: ${line}` });
      return;
    }
    if (record.message === READY_MESSAGE) ready();
    if (record.level === "error") this.deps.onLog({ node: this.id, t_ms: nowMs(), source: "log", text: line });
  }

  /** Sends a signal the harness means (the exit it causes is expected). */
  signal(sig: NodeJS.Signals): void {
    if (!this.child) throw new Error(`${this.id} is not running`);
    if (sig === "SIGKILL" || sig === "SIGTERM") this.exitExpected = true;
    this.child.kill(sig);
  }

  /** kill -9 and wait for the exit. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.signal("SIGKILL");
    await this.exitPromise;
  }

  /** SIGTERM and wait for the clean exit (code 0); a SIGKILL follows after TERM_TIMEOUT_MS. */
  async terminate(): Promise<void> {
    if (!this.child) return;
    const child = this.child;
    this.signal("SIGTERM");
    const timer = setTimeout(() => {
      this.exitExpected = false;
      child.kill("SIGKILL");
    }, this.slowdown * TERM_TIMEOUT_MS);
    await this.exitPromise;
    clearTimeout(timer);
  }

  pause(): void {
    this.signal("SIGSTOP");
  }

  resume(): void {
    if (this.child) this.child.kill("SIGCONT");
  }

  /** Closes the log files (after the process is gone). */
  async closeLogs(): Promise<void> {
    const open = [this.stdoutLog, this.stderrLog].filter((s) => !s.writableEnded);
    await Promise.all(open.map((s) => new Promise<void>((resolve) => s.end(() => resolve()))));
  }
}
