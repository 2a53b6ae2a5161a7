// Shared pieces of the benchmark: child servers, load generation, CPU and memory readings.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import autocannon from "autocannon";

export interface Server {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns a process and resolves once `ready(line)` is true for a stdout line. */
export function spawnServer(name: string, port: number, args: string[], env: Record<string, string>, ready: (line: string) => boolean, healthPort?: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "inherit"] });
    let buf = "";
    let done = false;
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      if (!done && lines.some(ready)) {
        done = true;
        resolve(makeServer(name, port, child));
      }
    });
    child.once("exit", (code) => {
      if (!done) reject(new Error(`${name} exited with ${code} before it was ready`));
    });
    if (healthPort !== undefined) {
      const poll = () => {
        if (done) return;
        request(healthPort, "GET", "/healthz").then(
          (r) => {
            if (r.status === 200 && !done) {
              done = true;
              resolve(makeServer(name, port, child));
            } else setTimeout(poll, 50);
          },
          () => setTimeout(poll, 50),
        );
      };
      poll();
    }
  });
}

function makeServer(name: string, port: number, child: ChildProcess): Server {
  return {
    name,
    port,
    child,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once("exit", () => r());
        child.kill("SIGKILL");
      }),
  };
}

/** CPU time (user + system) of a process so far, in microseconds, from /proc. */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / 100) * 1e6;
}

/** Resident set size of a process, in bytes, from /proc. */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
  readonly errors: number;
  readonly non2xx: number;
}

/** Drives one route with keep-alive connections for `seconds` and measures the server. */
export async function drive(opts: {
  server: Server;
  method: "GET" | "PUT";
  keys: number;
  value: Buffer;
  seconds: number;
  connections: number;
  path?: (i: number) => string;
}): Promise<LoadResult> {
  const pathOf = opts.path ?? ((i: number) => `/v1/cache/bench-${i % opts.keys}`);
  let n = 0;
  const pid = opts.server.child.pid as number;
  const cpu0 = cpuMicros(pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${opts.server.port}`,
    connections: opts.connections,
    duration: opts.seconds,
    pipelining: 1,
    requests: [
      {
        method: opts.method,
        setupRequest: (req) => {
          req.path = pathOf(n++);
          if (opts.method === "PUT") req.body = opts.value;
          return req;
        },
      },
    ],
  });
  const cpu1 = cpuMicros(pid);
  const total = result.requests.total;
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: total > 0 ? (cpu1 - cpu0) / total : 0,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Sends one request and resolves with the status and body. */
export function request(port: number, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers, agent: keepAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** Loads `count` keys of `value` with PUTs, 16 at a time. */
export async function preload(port: number, count: number, value: Buffer, keyOf = (i: number) => `bench-${i}`): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const r = await request(port, "PUT", `/v1/cache/${keyOf(i)}`, value);
      if (r.status !== 200) throw new Error(`preload PUT failed with ${r.status}: ${r.body.toString()}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
