// Plain HTTP calls of the benchmark's set-up steps (readiness, preloading, metrics); never used
// to generate the measured load.
import http from "node:http";

export interface Answer {
  readonly status: number;
  readonly body: Buffer;
}

/** One request to 127.0.0.1:`port`; `agent` reuses connections (default: a new connection). */
export function request(
  port: number,
  method: string,
  path: string,
  opts: { body?: Buffer | string; headers?: Record<string, string>; agent?: http.Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: opts.headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

export async function getJson<T>(port: number, path: string, headers: Record<string, string> = {}): Promise<T> {
  const a = await request(port, "GET", path, { headers });
  if (a.status !== 200) throw new Error(`GET ${path} answered ${a.status}: ${a.body.toString().slice(0, 200)}`);
  return JSON.parse(a.body.toString()) as T;
}

function authHeaders(token?: string): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Concurrent requests while preloading (enough to keep a server busy, few enough to be polite). */
const PRELOAD_CONCURRENCY = 16;

/** PUTs `keys` keys (`bench-0` ..) of `valueBytes` bytes, as the measured load will ask for them. */
export async function preload(port: number, keys: number, valueBytes: number, token?: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: PRELOAD_CONCURRENCY });
  const value = Buffer.alloc(valueBytes, "v");
  const headers = { "content-type": "application/octet-stream", ...authHeaders(token) };
  let next = 0;
  const worker = async () => {
    while (next < keys) {
      const key = `bench-${next++}`;
      const a = await request(port, "PUT", `/v1/cache/${key}`, { body: value, headers, agent });
      if (a.status !== 200) throw new Error(`preload PUT ${key} answered ${a.status}: ${a.body.toString().slice(0, 200)}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: PRELOAD_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
}

/** Items per POST /v1/cache/batch/put call (the server's SERVICE_MAX_BATCH_ITEMS default). */
export const BATCH_ITEMS = 1000;
const BATCH_CONCURRENCY = 4;

/** Loads `items` keys (`bench-0` ..) of `valueBytes` bytes by batch put; fails on any item not stored. */
export async function batchLoad(port: number, items: number, valueBytes: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: BATCH_CONCURRENCY });
  const value = "v".repeat(valueBytes);
  let next = 0;
  const worker = async () => {
    while (next < items) {
      const from = next;
      next = Math.min(items, next + BATCH_ITEMS);
      const list = Array.from({ length: next - from }, (_, i) => ({ key: `bench-${from + i}`, value }));
      const a = await request(port, "POST", "/v1/cache/batch/put", { body: JSON.stringify({ items: list }), headers: { "content-type": "application/json" }, agent });
      if (a.status !== 200) throw new Error(`batch put answered ${a.status}: ${a.body.toString().slice(0, 200)}`);
      const { results } = JSON.parse(a.body.toString()) as { results: Array<{ key: string; status: number }> };
      const failed = results.filter((r) => r.status !== 200);
      if (failed.length > 0) throw new Error(`batch put did not store ${failed.length} items, first ${JSON.stringify(failed[0])}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: BATCH_CONCURRENCY }, worker));
  } finally {
    agent.destroy();
  }
}
