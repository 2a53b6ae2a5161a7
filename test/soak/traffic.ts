// The soak's client traffic against every node: 68% GET, 25% PUT with a TTL, 2% lease reads of a
// few hot keys (the caller that gets a lease fills it or, as when its load fails, releases it),
// 5% DELETE and batch calls, over a key space twice the capacity, at a fixed rate with a bounded
// number in flight; plus SSE subscribers that come and go and the key browser paging through
// results. Every answer's status is counted (a 500 fails the soak).
import http from "node:http";
import { SeededRandom } from "../chaos/lib/random.js";

export interface TrafficTarget {
  id: string;
  api: string;
  mgmt: string;
}

export interface TrafficOptions {
  opsPerSecond: number;
  maxInFlight: number;
  keySpace: number;
  seed: number;
}

/** Shares of the mix; the rest (5%) is DELETE and batch calls. */
export const MIX = { get: 0.68, put: 0.25, lease: 0.02, delete: 0.02, batchPut: 0.01, batchGet: 0.01, batchDelete: 0.01 } as const;
/**
 * Lease reads go to a few hot keys with short TTLs, so that misses, waiters, fills and releases
 * keep coming; a lease holder "loads" for up to `loadMs`, then fills or releases (`releaseShare`).
 */
export const LEASE_TRAFFIC = { keys: 8, ttlS: 2, lease: "2s", wait: "500ms", loadMs: 300, releaseShare: 0.5 } as const;
const BATCH_ITEMS = 20;
/**
 * PUT TTLs: most items long-lived (they outlast the run, so writes keep the cache at its capacity
 * and eviction runs throughout), a share short (they expire, and become tombstones, at a steady
 * rate from the first 30 s on). With TTLs spread up to the run's length instead, expiries rose
 * through the whole run and the store never reached the steady state the memory gates compare.
 */
export const PUT_TTL_S = { long: [1800, 3600], short: [5, 30], shortShare: 0.2 } as const;

const VALUE_BYTES = [64, 1024] as const;

export class Traffic {
  readonly statuses = new Map<number, number>();
  readonly errors = new Map<string, number>();
  /** The first few unexpected answers (not 2xx, not 404), to say what they were. */
  readonly unexpected: string[] = [];
  ops = 0;
  sseFrames = 0;
  sseOpened = 0;
  browserPages = 0;
  private inFlight = 0;
  private stopped = false;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly random: SeededRandom;
  private readonly values: Buffer;
  private readonly sse = new Set<http.ClientRequest>();
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly targets: readonly TrafficTarget[],
    private readonly o: TrafficOptions,
  ) {
    this.random = new SeededRandom(o.seed);
    this.values = Buffer.alloc(VALUE_BYTES[1], "v");
  }

  /** A request; resolves with the status (0 on a transport error). `onHeaders` sees the answer's headers. */
  request(url: string, method: string, body?: Buffer | string, headers: Record<string, string> = {}, onHeaders?: (h: http.IncomingHttpHeaders) => void): Promise<number> {
    return new Promise((resolve) => {
      const payload = body === undefined ? undefined : Buffer.from(body);
      const req = http.request(url, { method, agent: this.agent, headers: { ...headers, ...(payload ? { "content-length": String(payload.length) } : {}) } }, (res) => {
        onHeaders?.(res.headers);
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => (text += text.length < 300 ? d : ""));
        res.on("end", () => {
          const s = res.statusCode ?? 0;
          if ((s >= 300 && s !== 404) && this.unexpected.length < 10) this.unexpected.push(`${method} ${url.replace(/^http:\/\/[^/]+/, "")} → ${s} ${text.slice(0, 200)}`);
          this.statuses.set(s, (this.statuses.get(s) ?? 0) + 1);
          resolve(s);
        });
      });
      req.setTimeout(30_000, () => req.destroy(new Error("timeout")));
      req.on("error", (e: NodeJS.ErrnoException) => {
        const code = e.code ?? e.message;
        this.errors.set(code, (this.errors.get(code) ?? 0) + 1);
        resolve(0);
      });
      req.end(payload);
    });
  }

  private key(): string {
    return `k${this.random.int(0, this.o.keySpace - 1)}`;
  }

  private ttlS(): number {
    const [low, high] = this.random.next() < PUT_TTL_S.shortShare ? PUT_TTL_S.short : PUT_TTL_S.long;
    return this.random.int(low, high);
  }

  private value(): Buffer {
    return this.values.subarray(0, this.random.int(VALUE_BYTES[0], VALUE_BYTES[1]));
  }

  private oneOp(): Promise<number> {
    const t = this.random.pick(this.targets);
    const roll = this.random.next();
    const item = (k: string) => `${t.api}/v1/cache/${k}`;
    const json = { "content-type": "application/json" };
    let edge = MIX.get;
    if (roll < edge) return this.request(item(this.key()), "GET");
    if (roll < (edge += MIX.put)) return this.request(`${item(this.key())}?ttl=${this.ttlS()}s`, "PUT", this.value());
    if (roll < (edge += MIX.lease)) return this.leaseOp(item(`lk${this.random.int(0, LEASE_TRAFFIC.keys - 1)}`));
    if (roll < (edge += MIX.delete)) return this.request(item(this.key()), "DELETE");
    const keys = Array.from({ length: BATCH_ITEMS }, () => this.key());
    if (roll < (edge += MIX.batchPut)) {
      const items = keys.map((key) => ({ key, value: this.value().toString(), ttl_ms: this.ttlS() * 1000 }));
      return this.request(`${t.api}/v1/cache/batch/put`, "POST", JSON.stringify({ items }), json);
    }
    if (roll < (edge += MIX.batchGet)) return this.request(`${t.api}/v1/cache/batch/get`, "POST", JSON.stringify({ keys }), json);
    return this.request(`${t.api}/v1/cache/batch/delete`, "POST", JSON.stringify({ keys: keys.slice(0, 10) }), json);
  }

  /**
   * A lease read; when it gets the lease, a "load" of up to LEASE_TRAFFIC.loadMs, then the fill
   * (a short TTL, so the key is missed again soon) or, as when a load fails, the release.
   */
  private async leaseOp(url: string): Promise<number> {
    let token: string | undefined;
    const status = await this.request(`${url}?lease=${LEASE_TRAFFIC.lease}&wait=${LEASE_TRAFFIC.wait}`, "GET", undefined, {}, (h) => {
      const t = h["x-cache-lease"];
      token = typeof t === "string" ? t : undefined;
    });
    if (token === undefined || this.stopped) return status;
    const release = this.random.next() < LEASE_TRAFFIC.releaseShare;
    const value = this.value();
    await new Promise((r) => setTimeout(r, this.random.int(0, LEASE_TRAFFIC.loadMs)));
    const lease = { "x-cache-lease": token };
    return release ? this.request(`${url}/lease`, "DELETE", undefined, lease) : this.request(`${url}?ttl=${LEASE_TRAFFIC.ttlS}s`, "PUT", value, lease);
  }

  /** Fills the nodes to about capacity (long TTLs) before the clock starts, so minute 2 is already a plateau. */
  async preload(items: number): Promise<void> {
    const t = this.targets[0] as TrafficTarget;
    const batch = 500;
    for (let start = 0; start < items; start += batch * 4) {
      await Promise.all(
        [0, 1, 2, 3].map(async (j) => {
          const from = start + j * batch;
          if (from >= items) return;
          const list = Array.from({ length: Math.min(batch, items - from) }, (_, i) => ({ key: `k${from + i}`, value: this.value().toString(), ttl_ms: this.random.int(...PUT_TTL_S.long) * 1000 }));
          await this.request(`${t.api}/v1/cache/batch/put`, "POST", JSON.stringify({ items: list }), { "content-type": "application/json" });
        }),
      );
    }
  }

  start(): void {
    const tickMs = 10;
    let due = 0;
    let last = performance.now();
    this.timers.push(
      setInterval(() => {
        const now = performance.now();
        due += ((now - last) / 1000) * this.o.opsPerSecond;
        last = now;
        while (due >= 1 && this.inFlight < this.o.maxInFlight && !this.stopped) {
          due -= 1;
          this.inFlight++;
          this.ops++;
          void this.oneOp().finally(() => this.inFlight--);
        }
        // what the in-flight cap held back is dropped, not queued: the rate is a ceiling
        if (due > this.o.opsPerSecond) due = 0;
      }, tickMs),
    );
    this.timers.push(setInterval(() => this.sseChurn(), 1_000));
    this.timers.push(setInterval(() => void this.browse(), 5_000));
  }

  /** Up to 8 SSE subscribers, each staying 2-30 s. */
  private sseChurn(): void {
    if (this.stopped || this.sse.size >= 8 || this.random.next() < 0.4) return;
    const t = this.random.pick(this.targets);
    const stayMs = this.random.int(2_000, 30_000);
    const req = http.get(`${t.mgmt}/cluster/events`, { agent: false }, (res) => {
      if (res.statusCode !== 200) {
        this.statuses.set(res.statusCode ?? 0, (this.statuses.get(res.statusCode ?? 0) ?? 0) + 1);
        res.resume();
        return;
      }
      this.sseOpened++;
      res.setEncoding("utf8").on("data", (d: string) => (this.sseFrames += d.split("\n\n").length - 1));
    });
    req.on("error", () => undefined);
    this.sse.add(req);
    const timer = setTimeout(() => {
      this.sse.delete(req);
      req.destroy();
    }, stayMs);
    timer.unref();
  }

  /** One listing of up to three pages through the key browser. */
  private async browse(): Promise<void> {
    if (this.stopped) return;
    const t = this.random.pick(this.targets);
    let cursor = "";
    // a cursor is bound to the query it came from: one q for the whole listing
    const q = `k${this.random.int(1, 9)}*`;
    for (let page = 0; page < 3; page++) {
      const url = `${t.api}/v1/cache/keys?q=${q}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const body = await new Promise<string>((resolve) => {
        http
          .get(url, { agent: this.agent }, (res) => {
            let text = "";
            res.setEncoding("utf8").on("data", (d: string) => (text += d));
            res.on("end", () => {
              const s = res.statusCode ?? 0;
              this.statuses.set(s, (this.statuses.get(s) ?? 0) + 1);
              if (s !== 200 && this.unexpected.length < 10) this.unexpected.push(`GET ${url.replace(/^http:\/\/[^/]+/, "")} → ${s} ${text.slice(0, 200)}`);
              resolve(text);
            });
          })
          .on("error", () => resolve(""));
      });
      this.browserPages++;
      try {
        cursor = (JSON.parse(body) as { next_cursor?: string }).next_cursor ?? "";
      } catch {
        cursor = "";
      }
      if (!cursor) break;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    for (const r of this.sse) r.destroy();
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    this.agent.destroy();
  }
}
