// Fills a node with many keys through the batch put route: 1,000 small items per call (or what
// the caller chooses), a few calls in parallel on keep-alive connections.
import { expect } from "chai";
import http from "node:http";

/** The i-th key of a loaded node (19 characters, sorted by i). */
export const loadedKey = (i: number): string => `user:${String(i).padStart(6, "0")}:profile`;

function post(agent: http.Agent, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { ...headers, "content-type": "application/json" } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The keys a load writes: their names, the items per batch call, the value of each. */
export interface LoadShape {
  readonly keyOf: (i: number) => string;
  readonly batchItems: number;
  readonly value: string;
  /** Each item's `ttl_ms`, when set. */
  readonly ttlMs?: number;
}

const SMALL_KEYS: LoadShape = { keyOf: loadedKey, batchItems: 1000, value: "v".repeat(32) };

/** Writes keys [0, count) (by default loadedKey with 32-byte values) at consistency one; every item must be stored. */
export async function loadKeys(api: string, count: number, headers: Record<string, string> = {}, parallel = 4, shape: LoadShape = SMALL_KEYS): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
  const { keyOf, batchItems, value, ttlMs } = shape;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + batchItems);
      const items = [];
      for (let i = from; i < next; i++) items.push(ttlMs === undefined ? { key: keyOf(i), value } : { key: keyOf(i), value, ttl_ms: ttlMs });
      const r = await post(agent, `${api}/v1/cache/batch/put?consistency=one`, headers, JSON.stringify({ items }));
      expect(r.status, r.body.slice(0, 200)).to.equal(200);
      const stored = (JSON.parse(r.body) as { results: Array<{ status: number }> }).results.filter((x) => x.status === 200).length;
      expect(stored, `items stored by the batch from ${from}`).to.equal(items.length);
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, worker));
  } finally {
    agent.destroy();
  }
}
