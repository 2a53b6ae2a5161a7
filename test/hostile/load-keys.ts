// Fills a node with many small keys through the batch put route: 1,000 items per call, a few
// calls in parallel on keep-alive connections.
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

/** Writes keys [0, count) with 32-byte values at consistency one; every item must be stored. */
export async function loadKeys(api: string, count: number, headers: Record<string, string> = {}, parallel = 4): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
  const value = "v".repeat(32);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + 1000);
      const items = [];
      for (let i = from; i < next; i++) items.push({ key: loadedKey(i), value });
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
