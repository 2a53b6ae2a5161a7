// A scripted FetchLike for unit tests: each endpoint (origin + base path) has a handler that
// answers, throws a transport error, or times out; every call is recorded.
import type { FetchLike, RequestInitLike, ResponseLike } from "../../src/fetch-types.js";

export interface Call {
  readonly url: string;
  readonly endpoint: string;
  readonly init: RequestInitLike;
  /** The body as sent, as bytes (strings UTF-8 encoded). */
  readonly bodyBytes: Uint8Array | undefined;
}

export type Handler = (call: Call) => ResponseLike | Promise<ResponseLike>;

/** An answer with a JSON (object, typed application/json unless `headers` say otherwise) or text (string) body. */
export function answer(status: number, body: unknown = "", headers: Record<string, string> = {}): ResponseLike {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const bytes = new TextEncoder().encode(text);
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (typeof body !== "string") lower["content-type"] ??= "application/json";
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: { get: (n: string) => lower[n.toLowerCase()] ?? null },
    body: null,
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
    arrayBuffer: async () => bytes.slice().buffer,
  };
}

/** An event-stream answer carrying `frames`; open until cancelled unless `endAfter` (clean end) or `breakAfter` (a read error). */
export function sseAnswer(frames: string[], opts: { endAfter?: boolean; breakAfter?: boolean } = {}): ResponseLike & { cancelled: () => boolean } {
  let cancelled = false;
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      for (const fr of frames) ctrl.enqueue(enc.encode(fr));
      if (opts.endAfter) ctrl.close();
      if (opts.breakAfter) ctrl.error(new TypeError("network error"));
    },
    cancel() {
      cancelled = true;
    },
  });
  return { ...answer(200, ""), body, cancelled: () => cancelled };
}

/** An answer carrying raw bytes (typed application/octet-stream, as a node sends a value, unless `headers` say otherwise). */
export function bytesAnswer(status: number, bytes: Uint8Array, headers: Record<string, string> = {}): ResponseLike {
  const r = answer(status, "", { "content-type": "application/octet-stream", ...headers });
  return { ...r, arrayBuffer: async () => bytes.slice().buffer, text: async () => new TextDecoder().decode(bytes) };
}

/** The error envelope answer of a code. */
export function envelope(status: number, code: string, message = code.toLowerCase(), details?: Record<string, unknown>, headers: Record<string, string> = {}): ResponseLike {
  return answer(status, { error: message, code, ...(details ? { details } : {}) }, headers);
}

/** A connection failure as undici reports it. */
export function refused(): never {
  throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
}

/** A time-limit failure as FetchLike implementations report it. */
export function timedOut(): never {
  throw Object.assign(new Error("no answer"), { name: "TimeoutError" });
}

export class FakeFetch {
  readonly calls: Call[] = [];
  private readonly handlers = new Map<string, Handler>();

  /** `endpoint` is a base URL such as http://a:1; unknown endpoints refuse connections. */
  on(endpoint: string, handler: Handler): this {
    this.handlers.set(endpoint, handler);
    return this;
  }

  readonly fetch: FetchLike = async (url, init) => {
    const endpoint = [...this.handlers.keys()].find((e) => url.startsWith(`${e}/`)) ?? new URL(url).origin;
    const body = init.body;
    const call: Call = { url, endpoint, init, bodyBytes: body === undefined ? undefined : typeof body === "string" ? new TextEncoder().encode(body) : body.slice() };
    this.calls.push(call);
    const h = this.handlers.get(endpoint);
    if (!h) refused();
    return h(call);
  };

  /** Calls made to `endpoint`. */
  to(endpoint: string): Call[] {
    return this.calls.filter((c) => c.endpoint === endpoint);
  }

  /** Endpoints in call order. */
  get order(): string[] {
    return this.calls.map((c) => c.endpoint);
  }
}

/**
 * An answer whose headers came but whose body never ends: its reads never settle, whatever signal
 * the request had (a node that trickles bytes, or a fetch implementation that ignores its signal).
 */
export function stalledAnswer(status: number, headers: Record<string, string> = {}): ResponseLike & { cancelled: () => boolean } {
  const never = new Promise<never>(() => undefined);
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start: () => undefined,
    cancel: () => {
      cancelled = true;
    },
  });
  return { ...answer(status, "", headers), body, text: () => never, json: () => never, arrayBuffer: () => never, cancelled: () => cancelled };
}

/** Lets pending promises and real-loop callbacks run (a few real milliseconds; no test time passes). */
export const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

/** Whether `p` settled within a few real milliseconds, and how. */
export async function outcome<T>(p: Promise<T>): Promise<{ state: "pending" } | { state: "resolved"; value: T } | { state: "rejected"; error: unknown }> {
  let result: { state: "pending" } | { state: "resolved"; value: T } | { state: "rejected"; error: unknown } = { state: "pending" };
  p.then(
    (value) => (result = { state: "resolved", value }),
    (error: unknown) => (result = { state: "rejected", error }),
  );
  await settle();
  return result;
}
