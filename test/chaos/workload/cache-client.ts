// The cache operations of the workload and the checks, each turned into one history record with
// its outcome: ok (answered as expected), fail (certainly not applied: never sent, or a 4xx) or
// info (indeterminate: a timeout, a broken connection after sending, or a 5xx).
import type { Consistency, LeaseAnswer, Op, OpKind } from "../checker/history.js";
import { RequestError, type HttpAnswer, type HttpClient } from "./http-client.js";

/** Where a node's client API answers. */
export interface Endpoint {
  id: string;
  host: string;
  apiPort: number;
}

export interface OpContext {
  worker: Op["worker"];
  phase: string;
  timeoutMs: number;
}

/** The harness clock: epoch milliseconds with sub-millisecond resolution. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function keyPath(key: string, consistency: Consistency): string {
  return `/v1/cache/${encodeURIComponent(key)}?consistency=${consistency}`;
}

function envelope(answer: HttpAnswer): { code: string | null; error?: string } {
  try {
    const parsed = JSON.parse(answer.body.toString("utf8")) as { code?: unknown; error?: unknown };
    return { code: typeof parsed.code === "string" ? parsed.code : null, ...(typeof parsed.error === "string" ? { error: parsed.error.slice(0, 200) } : {}) };
  } catch {
    return { code: null };
  }
}

/** A lease read's 404: the lease (with its token), LEASE_HELD, or a plain miss; undefined for any other 404. */
function leaseMiss(answer: HttpAnswer): { answer: LeaseAnswer; token?: string } | undefined {
  const code = envelope(answer).code;
  const token = answer.headers["x-cache-lease"];
  if (code === "NOT_FOUND") return typeof token === "string" ? { answer: "granted", token } : { answer: "none" };
  if (code === "LEASE_HELD") return { answer: "held" };
  return undefined;
}

function etagOf(answer: HttpAnswer): { etag?: string } {
  const etag = answer.headers.etag;
  return typeof etag === "string" ? { etag } : {};
}

export class CacheClient {
  constructor(private readonly http: HttpClient) {}

  write(node: Endpoint, key: string, value: string, consistency: Consistency, ctx: OpContext): Promise<Op> {
    return this.mutate("write", node, key, value, consistency, ctx);
  }

  delete(node: Endpoint, key: string, consistency: Consistency, ctx: OpContext): Promise<Op> {
    return this.mutate("delete", node, key, null, consistency, ctx);
  }

  /**
   * PUT conditioned on `precondition`: an ETag (If-Match) or "*" (If-None-Match: *, the key is
   * absent). 412 is a `fail`: the primary changed nothing.
   */
  conditionalWrite(node: Endpoint, key: string, value: string, precondition: string, ctx: OpContext): Promise<Op> {
    const condition: Record<string, string> = precondition === "*" ? { "if-none-match": "*" } : { "if-match": precondition };
    return this.mutate("write", node, key, value, "quorum", ctx, { precondition, headers: condition });
  }

  /** POST .../incr with `{delta}` at `consistency`; an ok op's value is the counter's new value. */
  async incr(node: Endpoint, key: string, delta: number, consistency: Consistency, ctx: OpContext): Promise<Op> {
    const base: Op = { ...this.base("incr", node, key, null, consistency, ctx), delta };
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: "POST",
        path: `/v1/cache/${encodeURIComponent(key)}/incr?consistency=${consistency}`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ delta }),
        timeoutMs: ctx.timeoutMs,
      });
      if (answer.status !== 200) return this.finish(base, answer, undefined);
      const { value } = JSON.parse(answer.body.toString("utf8")) as { value: number };
      return { ...this.finish(base, answer, "ok"), value: String(value), ...etagOf(answer) };
    } catch (err) {
      return this.failed(base, err);
    }
  }

  /**
   * A QUORUM lease read (`?lease=&wait=`): a value (200, a hit or a waiter's), the lease (404 with
   * X-Cache-Lease: `lease` is the token), another caller's lease (404 LEASE_HELD), or a plain 404
   * (no lease could be taken). All four are ok.
   */
  async leaseRead(node: Endpoint, key: string, leaseMs: number, waitMs: number, ctx: OpContext): Promise<Op> {
    const base: Op = { ...this.base("lease", node, key, null, "quorum", ctx), lease_ms: leaseMs };
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: "GET",
        path: `${keyPath(key, "quorum")}&lease=${leaseMs}ms&wait=${waitMs}ms`,
        headers: { accept: "application/json" },
        timeoutMs: ctx.timeoutMs,
      });
      if (answer.status === 200) {
        const item = JSON.parse(answer.body.toString("utf8")) as { value: string; version: number; origin: string };
        const value = Buffer.from(item.value, "base64").toString("utf8");
        return { ...this.finish(base, answer, "ok"), value, version: item.version, origin: item.origin, lease_answer: "hit" };
      }
      const miss = answer.status === 404 ? leaseMiss(answer) : undefined;
      if (miss === undefined) return this.finish(base, answer, undefined);
      return { ...this.finish(base, answer, "ok"), lease_answer: miss.answer, ...(miss.token ? { lease: miss.token } : {}) };
    } catch (err) {
      return this.failed(base, err);
    }
  }

  /** The fill of the lease `token`: a QUORUM PUT with X-Cache-Lease and a TTL; 409 (lease not held) is a `fail`. */
  async fill(node: Endpoint, key: string, value: string, token: string, ttlMs: number, ctx: OpContext): Promise<Op> {
    const base: Op = { ...this.base("write", node, key, value, "quorum", ctx), lease: token, ttl_ms: ttlMs };
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: "PUT",
        path: `${keyPath(key, "quorum")}&ttl=${ttlMs}ms`,
        headers: { "content-type": "application/octet-stream", "x-cache-lease": token },
        body: value,
        timeoutMs: ctx.timeoutMs,
      });
      return this.finish(base, answer, answer.status === 200 ? "ok" : undefined);
    } catch (err) {
      return this.failed(base, err);
    }
  }

  /** DELETE .../lease with the token: 204 ok (released), 409 a `fail` (not held), 503 `info`. */
  async release(node: Endpoint, key: string, token: string, ctx: OpContext): Promise<Op> {
    const base: Op = { ...this.base("release", node, key, null, "quorum", ctx), lease: token };
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: "DELETE",
        path: `/v1/cache/${encodeURIComponent(key)}/lease`,
        headers: { "x-cache-lease": token },
        timeoutMs: ctx.timeoutMs,
      });
      return this.finish(base, answer, answer.status === 204 ? "ok" : undefined);
    } catch (err) {
      return this.failed(base, err);
    }
  }

  private async mutate(
    f: OpKind,
    node: Endpoint,
    key: string,
    value: string | null,
    consistency: Consistency,
    ctx: OpContext,
    condition?: { precondition: string; headers: Record<string, string> },
  ): Promise<Op> {
    const base = { ...this.base(f, node, key, value, consistency, ctx), ...(condition ? { precondition: condition.precondition } : {}) };
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: f === "write" ? "PUT" : "DELETE",
        path: keyPath(key, consistency),
        ...(f === "write" ? { body: value ?? "", headers: { "content-type": "application/octet-stream", ...condition?.headers } } : {}),
        timeoutMs: ctx.timeoutMs,
      });
      if (answer.status === 200) return { ...this.finish(base, answer, "ok"), ...etagOf(answer) };
      return this.finish(base, answer, undefined);
    } catch (err) {
      return this.failed(base, err);
    }
  }

  /** GET with the JSON envelope: value, version and origin; 404 is an ok read of absence. */
  async read(node: Endpoint, key: string, consistency: Consistency, ctx: OpContext): Promise<Op> {
    const base = this.base("read", node, key, null, consistency, ctx);
    try {
      const answer = await this.http.request({
        host: node.host,
        port: node.apiPort,
        method: "GET",
        path: keyPath(key, consistency),
        headers: { accept: "application/json" },
        timeoutMs: ctx.timeoutMs,
      });
      if (answer.status === 200) {
        const item = JSON.parse(answer.body.toString("utf8")) as { value: string; value_encoding?: string; version: number; origin: string };
        const value = Buffer.from(item.value, "base64").toString("utf8");
        return { ...this.finish(base, answer, "ok"), value, version: item.version, origin: item.origin, ...etagOf(answer) };
      }
      if (answer.status === 404 && envelope(answer).code === "NOT_FOUND") return this.finish(base, answer, "ok");
      return this.finish(base, answer, undefined);
    } catch (err) {
      return this.failed(base, err);
    }
  }

  /** HEAD `consistency=one`: the node's own (version, origin) of the key; status 0 when no answer. */
  async head(node: Endpoint, key: string, timeoutMs: number): Promise<{ status: number; version: number | null; origin: string | null }> {
    try {
      const answer = await this.http.request({ host: node.host, port: node.apiPort, method: "HEAD", path: keyPath(key, "one"), timeoutMs });
      const version = answer.headers["x-cache-version"];
      const origin = answer.headers["x-cache-origin"];
      return {
        status: answer.status,
        version: typeof version === "string" ? Number(version) : null,
        origin: typeof origin === "string" ? origin : null,
      };
    } catch {
      return { status: 0, version: null, origin: null };
    }
  }

  /** The owners of a key as `node` sees them. */
  async owners(node: Endpoint, key: string, timeoutMs: number): Promise<string[] | undefined> {
    try {
      const answer = await this.http.request({ host: node.host, port: node.apiPort, method: "GET", path: `/v1/owners/${encodeURIComponent(key)}`, timeoutMs });
      if (answer.status !== 200) return undefined;
      return (JSON.parse(answer.body.toString("utf8")) as { owners: string[] }).owners;
    } catch {
      return undefined;
    }
  }

  private base(f: OpKind, node: Endpoint, key: string, value: string | null, consistency: Consistency, ctx: OpContext): Op {
    return {
      worker: ctx.worker,
      f,
      key,
      value,
      invoke_ms: nowMs(),
      complete_ms: 0,
      outcome: "info",
      node: node.id,
      version: null,
      origin: null,
      consistency,
      phase: ctx.phase,
      status: null,
      code: null,
    };
  }

  /** An answer: `ok` as decided by the caller, else 4xx fail and 5xx (or anything else) info. */
  private finish(base: Op, answer: HttpAnswer, ok: "ok" | undefined): Op {
    const outcome = ok ?? (answer.status >= 400 && answer.status < 500 ? "fail" : "info");
    if (ok) return { ...base, complete_ms: nowMs(), outcome, status: answer.status, code: null };
    // the envelope's message says why (a minority refusal and a partial write share QUORUM_FAILED)
    return { ...base, complete_ms: nowMs(), outcome, status: answer.status, ...envelope(answer) };
  }

  private failed(base: Op, err: unknown): Op {
    const e = err instanceof RequestError ? err : new RequestError(String(err), true, "UNKNOWN");
    return { ...base, complete_ms: nowMs(), outcome: e.sent ? "info" : "fail", code: e.code, error: e.message.slice(0, 200) };
  }
}
