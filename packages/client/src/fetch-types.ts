// The small slice of the Fetch API the client needs. The browser's fetch, Node's global fetch and
// the undici dispatcher bridge of `@hypercache/client/node` all satisfy it, so the core never
// names a platform type beyond these.

/** Headers of an answer, read by name (case-insensitive). */
export interface HeadersLike {
  get(name: string): string | null;
}

/** An HTTP answer whose body is read once. */
export interface ResponseLike {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: HeadersLike;
  /** The body as a stream (Server-Sent Events); null when there is none. */
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** One attempt's request: an absolute URL, a replayable body, a signal and a time limit. */
export interface RequestInitLike {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  /** The caller's signal: aborting it ends the request. */
  signal?: AbortSignal | undefined;
  /**
   * Time limit (ms) for the headers and, unless `stream`, the body. When it passes the promise
   * (or the body read) rejects with an error whose `name` is "TimeoutError".
   */
  timeoutMs?: number | undefined;
  /** The body is a long-lived stream: the time limit covers the headers only. */
  stream?: boolean | undefined;
}

/**
 * Sends one HTTP request to one endpoint and honours `timeoutMs`. Rejects on transport errors
 * only, never because of a status. Implementations: {@link globalFetch}, and the undici Agent of
 * `@hypercache/client/node`.
 *
 * `boundsAttempts`: the fetch itself ends the request when `timeoutMs` passes (over the headers,
 * and over a body read whole with `arrayBuffer()` when the answer has a Content-Length) and when
 * `signal` aborts, and its client's close() ends what is in flight. The failover transport then
 * adds no timer and no race of its own to such an attempt. Without it (any other fetch) every
 * attempt runs under an attempt scope (attempt-scope.ts).
 */
export type FetchLike = ((url: string, init: RequestInitLike) => Promise<ResponseLike>) & { readonly boundsAttempts?: true };

function timeoutError(ms: number): Error {
  const e = new Error(`no answer within ${ms} ms`);
  e.name = "TimeoutError";
  return e;
}

/** The platform's `fetch` (browser, Node's bundled undici, Deno, Bun) as a {@link FetchLike}. */
export function globalFetch(): FetchLike {
  const f = globalThis.fetch;
  if (typeof f !== "function") throw new TypeError("no global fetch: pass the `fetch` option");
  return async (url, init) => {
    const ms = init.timeoutMs;
    // A redirect is never followed: it would read another origin's answer as the node's, and
    // replay the request body (a value, credentials in a header) there. It comes back as the 3xx
    // (an opaque redirect, status 0, in browsers), which the client reports as an error.
    const common = { method: init.method, headers: init.headers, body: init.body as RequestInit["body"], redirect: "manual" as const };
    if (!ms) return (await f(url, { ...common, signal: init.signal ?? null })) as ResponseLike;
    if (!init.stream) {
      const limit = AbortSignal.timeout(ms);
      const signal = init.signal ? AbortSignal.any([init.signal, limit]) : limit;
      return (await f(url, { ...common, signal })) as ResponseLike;
    }
    // A stream: the limit covers the headers, then only the caller's signal can end it. Joined
    // with AbortSignal.any, which puts no listener on the caller's signal (a watch reconnects on
    // one signal for days).
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(timeoutError(ms)), ms);
    const signal = init.signal ? AbortSignal.any([init.signal, limit.signal]) : limit.signal;
    try {
      return (await f(url, { ...common, signal })) as ResponseLike;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** True for the rejection of a request whose time limit passed. */
export function isTimeout(err: unknown): boolean {
  const e = err as { name?: string; code?: string } | null;
  return e?.name === "TimeoutError" || e?.code === "UND_ERR_HEADERS_TIMEOUT" || e?.code === "UND_ERR_BODY_TIMEOUT" || e?.code === "UND_ERR_CONNECT_TIMEOUT";
}
