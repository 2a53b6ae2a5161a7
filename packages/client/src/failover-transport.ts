// Sends one request with failover. Transport errors, timeouts and 5xx answers move the request to
// the next endpoint; any other answer (2xx, 3xx, 4xx) is returned at once. The body is held in
// memory and replayed on each attempt. When every endpoint has failed, discovery runs once and the
// endpoints it adds are tried; then the request ends with AllEndpointsFailedError.
import type { AuthProvider } from "./auth.js";
import type { EndpointPool } from "./endpoint-pool.js";
import { AllEndpointsFailedError, errorFromAnswer, TimeoutError, TransportError, type FailedAttempt, type HypercacheError } from "./errors.js";
import { isTimeout, type FetchLike, type HeadersLike, type ResponseLike } from "./fetch-types.js";
import type { Runtime } from "./runtime.js";

/** Default time limit of one attempt, headers and body (ms). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** A request to whichever endpoint answers. */
export interface OutgoingRequest {
  readonly method: string;
  /** Path and query, starting with "/", appended to the endpoint's base URL. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Uint8Array | undefined;
  /** Ends the request at once, without failover. */
  readonly signal?: AbortSignal | undefined;
  /** Return the answer with its body unread (event streams); the time limit then covers the headers only. */
  readonly stream?: boolean;
}

/** The answer and the endpoint that gave it. */
export interface Answer {
  readonly response: ResponseLike;
  readonly endpoint: string;
}

/** What the client reports while it works (the CLI's -v prints these). */
export type ClientEvent =
  | { readonly type: "failover"; readonly endpoint: string; readonly error: HypercacheError | TransportError; readonly next: string | undefined }
  | { readonly type: "discovery"; readonly endpoints: readonly string[]; readonly changed: boolean }
  | { readonly type: "discovery-failed"; readonly error: Error };

export interface FailoverTransportDeps {
  readonly fetch: FetchLike;
  readonly pool: EndpointPool;
  readonly auth: AuthProvider;
  readonly runtime: Runtime;
  readonly timeoutMs: number;
  readonly onEvent?: ((e: ClientEvent) => void) | undefined;
  /** Refreshes the pool from the cluster; called at most once per request, after every endpoint failed. */
  readonly rediscover?: (() => Promise<unknown>) | undefined;
}

/** An answer whose body was read within the attempt's time limit. */
export class BufferedResponse implements ResponseLike {
  readonly body = null;
  constructor(
    readonly status: number,
    readonly headers: HeadersLike,
    readonly bytes: Uint8Array,
    /** Base URL of the endpoint that answered. */
    readonly endpoint: string,
  ) {}
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  async text(): Promise<string> {
    return new TextDecoder().decode(this.bytes);
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.bytes;
    return (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer) as ArrayBuffer;
  }
}

type AttemptResult = { ok: true; answer: Answer } | { ok: false; failure: FailedAttempt };

export class FailoverTransport {
  constructor(private readonly deps: FailoverTransportDeps) {}

  async send(req: OutgoingRequest): Promise<Answer> {
    req.signal?.throwIfAborted();
    // The common case: the current endpoint works.
    const first = this.deps.pool.preferred();
    let firstFailure: FailedAttempt | undefined;
    if (first !== undefined) {
      const r = await this.attempt(first, req);
      if (r.ok) {
        this.deps.pool.succeeded(first);
        return r.answer;
      }
      firstFailure = r.failure;
    }
    return this.failover(req, first, firstFailure);
  }

  /** The rest of the order after the preferred endpoint failed (or when none was usable). */
  private async failover(req: OutgoingRequest, first: string | undefined, firstFailure: FailedAttempt | undefined): Promise<Answer> {
    const attempts: FailedAttempt[] = [];
    const tried = new Set<string>();
    let rediscovered = false;
    if (first !== undefined && firstFailure) {
      tried.add(first);
      this.deps.pool.failed(first);
      attempts.push(firstFailure);
      this.deps.onEvent?.({ type: "failover", endpoint: first, error: firstFailure.error, next: this.deps.pool.order().find((u) => u !== first) });
    }
    for (;;) {
      const order = this.deps.pool.order().filter((u) => !tried.has(u));
      for (let i = 0; i < order.length; i++) {
        const endpoint = order[i] as string;
        tried.add(endpoint);
        const r = await this.attempt(endpoint, req);
        if (r.ok) {
          this.deps.pool.succeeded(endpoint);
          return r.answer;
        }
        this.deps.pool.failed(endpoint);
        attempts.push(r.failure);
        this.deps.onEvent?.({ type: "failover", endpoint, error: r.failure.error, next: order[i + 1] });
      }
      if (rediscovered || !this.deps.rediscover) break;
      rediscovered = true;
      await this.deps.rediscover().catch(() => undefined);
      if (this.deps.pool.order().every((u) => tried.has(u))) break;
    }
    throw new AllEndpointsFailedError(attempts);
  }

  /** One endpoint, with one more try after a 401 when the credential could be refreshed. */
  private async attempt(endpoint: string, req: OutgoingRequest): Promise<AttemptResult> {
    const pending = this.deps.auth.authorization(endpoint);
    let authorization = typeof pending === "object" ? await pending : pending;
    let r = await this.once(endpoint, req, authorization);
    if (r.ok && r.answer.response.status === 401 && this.deps.auth.refreshAfterUnauthorized) {
      if (req.stream) await r.answer.response.body?.cancel().catch(() => undefined);
      if (await this.deps.auth.refreshAfterUnauthorized(authorization)) {
        authorization = await this.deps.auth.authorization(endpoint);
        r = await this.once(endpoint, req, authorization);
      }
    }
    return r;
  }

  private async once(endpoint: string, req: OutgoingRequest, authorization: string | undefined): Promise<AttemptResult> {
    const started = this.deps.runtime.clock.nowMs();
    const failure = (error: HypercacheError | TransportError): AttemptResult => ({ ok: false, failure: { endpoint, error, durationMs: this.deps.runtime.clock.nowMs() - started } });
    const headers = authorization === undefined ? req.headers : { ...req.headers, authorization };
    try {
      const res = await this.deps.fetch(endpoint + req.path, { method: req.method, headers, body: req.body, signal: req.signal, timeoutMs: this.deps.timeoutMs, stream: req.stream });
      if (req.stream && res.status < 500) return { ok: true, answer: { response: res, endpoint } };
      const bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status >= 500) return failure(errorFromAnswer(res.status, new TextDecoder().decode(bytes), endpoint));
      return { ok: true, answer: { response: new BufferedResponse(res.status, res.headers, bytes, endpoint), endpoint } };
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason ?? err;
      if (isTimeout(err)) return failure(new TimeoutError(`no answer within ${this.deps.timeoutMs} ms`, endpoint, { cause: err }));
      return failure(new TransportError(transportMessage(err), endpoint, { cause: err }));
    }
  }
}

/** "fetch failed: ECONNREFUSED" rather than the bare "fetch failed" of undici. */
function transportMessage(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { code?: string; message?: string } };
  const detail = e.cause?.code ?? e.cause?.message ?? e.code;
  const message = e.message ?? String(err);
  return detail && !message.includes(detail) ? `${message}: ${detail}` : message;
}
