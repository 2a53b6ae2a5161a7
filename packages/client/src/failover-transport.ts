// Sends one request with failover: transport errors, timeouts and 5xx move it to the next endpoint,
// any other answer is returned at once; the body is held and replayed. When every endpoint failed,
// discovery runs once and its new endpoints are tried; then the request ends with AllEndpointsFailedError.
import type { AuthProvider } from "./auth.js";
import type { EndpointPool } from "./endpoint-pool.js";
import { AllEndpointsFailedError, errorFromAnswer, HypercacheError, TimeoutError, type TransportError, type FailedAttempt } from "./errors.js";
import { attemptError, neverSent, notApplied } from "./attempt-errors.js";
import { parseJsonAnswer } from "./answer-checks.js";
import { readBounded, refuseDeclared } from "./answer-bounds.js";
import { AttemptScope, untilAborted } from "./attempt-scope.js";
import { type FetchLike, type HeadersLike, type RequestInitLike, type ResponseLike } from "./fetch-types.js";
import type { Runtime } from "./runtime.js";

/** Default time limit of one attempt, headers and body (ms). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Default bound of one answer's body (bytes): 64 MiB, above the largest answer a node sends with the
 * default limits (a value: at most 15 MiB; a batch get of 16 MiB of values, base64 (21.4 MiB) with
 * 1000 keys of 4 KiB, JSON escaped (24 MiB): under 48 MiB). Larger limits need a larger `maxAnswerBytes`.
 */
export const ANSWER_BYTES_MAX = 64 * 1024 * 1024;

/** Attempts one request makes at most, each on another endpoint: about 80 s (and one discovery run) at most by default. */
export const ATTEMPTS_MAX = 8;

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
  /** An endpoint to try last (a watch moving off a node whose stream went silent). */
  readonly avoid?: string | undefined;
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
  | { readonly type: "discovery-failed"; readonly error: Error }
  /** getOrLoad loaded a value but could not store it (the caller still got the value). */
  | { readonly type: "fill-failed"; readonly key: string; readonly error: Error };

export interface FailoverTransportDeps {
  readonly fetch: FetchLike;
  readonly pool: EndpointPool;
  readonly auth: AuthProvider;
  readonly runtime: Runtime;
  /** Time limit of one attempt, headers and body (ms); 0 sets none. */
  readonly timeoutMs: number;
  /** Bound of one answer's body (bytes); default ANSWER_BYTES_MAX. */
  readonly answerBytesMax?: number | undefined;
  /** Aborted by the client's close(): every attempt in flight ends with its reason. */
  readonly closed?: AbortSignal | undefined;
  readonly onEvent?: ((e: ClientEvent) => void) | undefined;
  /**
   * Whether a failed attempt that may have reached a node moves to the next endpoint. True (the
   * default) for replays that are safe. False for calls that act on the answering node's state:
   * they move on only when the request certainly never left (connection refused, unknown host),
   * otherwise the error ends the request. A function decides per failure, for calls that must not
   * be applied twice: a conditional write may move on after a 503 DRAINING (refused before
   * anything was applied), an increment under its Idempotency-Key after anything but a 500.
   * The endpoint is marked failed (it cools down) either way.
   */
  readonly failoverAfterSent?: boolean | ((error: HypercacheError | TransportError) => boolean) | undefined;
  /** Attempts one request makes at most; default ATTEMPTS_MAX. */
  readonly attemptsMax?: number | undefined;
  /**
   * The error of an answer under 500 that says the node refused the request whole (a batch write
   * a draining node answered item by item): the attempt fails with it as after a 5xx.
   */
  readonly refusal?: ((path: string, answer: BufferedResponse) => HypercacheError | undefined) | undefined;
  /** Refreshes the pool from the cluster; called at most once per request, after every endpoint failed. */
  readonly rediscover?: (() => Promise<unknown>) | undefined;
}

/** An answer whose body was read within the attempt's time limit. */
export class BufferedResponse implements ResponseLike {
  readonly body = null;
  readonly status: number;
  constructor(
    /** The answer as the fetch gave it; its headers are read from it when asked for. */
    private readonly from: ResponseLike,
    readonly bytes: Uint8Array,
    /** Base URL of the endpoint that answered. */
    readonly endpoint: string,
  ) {
    this.status = from.status;
  }
  /**
   * An earlier attempt of this request may have reached a node (it timed out, broke or answered a
   * 5xx; not a refused connection): this answer is a replay's, and may describe the state the
   * earlier attempt left (a delete that finds nothing to delete).
   */
  replayed = false;
  /**
   * The answer's headers; a chunked answer's Content-Length is the length of the body read, so
   * openapi-fetch parses it with json() (which checks it) rather than JSON.parse of text().
   */
  get headers(): HeadersLike {
    const h = this.from.headers;
    if (h.get("content-length") !== null) return h;
    const length = String(this.bytes.byteLength);
    return { get: (name) => (name.toLowerCase() === "content-length" ? length : h.get(name)) };
  }
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  async text(): Promise<string> {
    return new TextDecoder().decode(this.bytes);
  }
  /** The body as JSON: a JSON content type, UTF-8 and well-formed, or a BadAnswerError. */
  async json(): Promise<unknown> {
    return parseJsonAnswer(this.bytes, this);
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.bytes;
    return (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer) as ArrayBuffer;
  }
}

/** A failed attempt as `once` returns it: a class, so telling it from an Answer is one instanceof. */
class Failure implements FailedAttempt {
  constructor(
    readonly endpoint: string,
    readonly error: HypercacheError | TransportError,
    readonly durationMs: number,
  ) {}
}

type AttemptResult = Answer | Failure;

export class FailoverTransport {
  /** The attempts under way, which close() ends (one listener on the close signal for them all). */
  private readonly inflight = new Set<AttemptScope>();

  constructor(private readonly deps: FailoverTransportDeps) {
    deps.closed?.addEventListener("abort", () => {
      for (const scope of this.inflight) scope.abort(deps.closed?.reason);
    }, { once: true });
  }

  async send(req: OutgoingRequest): Promise<Answer> {
    req.signal?.throwIfAborted();
    // The common case: the current endpoint works.
    const pool = this.deps.pool;
    const preferred = pool.preferred();
    const first = preferred === req.avoid ? undefined : preferred;
    let firstFailure: Failure | undefined;
    if (first !== undefined) {
      const r = await this.attempt(first, req);
      if (!(r instanceof Failure)) {
        pool.succeeded(first);
        return r;
      }
      firstFailure = r;
      if (this.stops(r)) {
        pool.failed(first);
        throw r.error;
      }
    }
    return this.failover(req, first, firstFailure);
  }

  /**
   * One attempt on the preferred endpoint, for a call whose failure says nothing about the
   * endpoint (a lease release the key's primary could not take): no cooldown, no failover, no
   * event, nothing after close(). The answer, the failure, or undefined when nothing was sent.
   */
  async sendUntracked(req: OutgoingRequest): Promise<Answer | FailedAttempt | undefined> {
    const endpoint = this.deps.pool.preferred();
    if (endpoint === undefined || this.deps.closed?.aborted) return undefined;
    return this.attempt(endpoint, req);
  }

  /** The rest of the order after the preferred endpoint failed (or when none was usable). */
  private async failover(req: OutgoingRequest, first: string | undefined, firstFailure: Failure | undefined): Promise<Answer> {
    const attempts: FailedAttempt[] = [];
    const tried = new Set<string>();
    let rediscovered = false;
    if (first !== undefined && firstFailure) {
      tried.add(first);
      this.deps.pool.failed(first);
      attempts.push(firstFailure);
      this.deps.onEvent?.({ type: "failover", endpoint: first, error: firstFailure.error, next: this.deps.pool.order().find((u) => u !== first) });
    }
    const attemptsMax = this.deps.attemptsMax ?? ATTEMPTS_MAX;
    for (;;) {
      const order = this.deps.pool.order().filter((u) => !tried.has(u));
      if (req.avoid !== undefined && order.includes(req.avoid)) order.push(...order.splice(order.indexOf(req.avoid), 1));
      for (let i = 0; i < order.length && attempts.length < attemptsMax; i++) {
        const endpoint = order[i] as string;
        tried.add(endpoint);
        const r = await this.attempt(endpoint, req);
        if (!(r instanceof Failure)) {
          this.deps.pool.succeeded(endpoint);
          return attempts.some((a) => !notApplied(a.error)) ? replayed(r) : r;
        }
        this.deps.pool.failed(endpoint);
        if (this.stops(r)) throw r.error;
        attempts.push(r);
        this.deps.onEvent?.({ type: "failover", endpoint, error: r.error, next: order[i + 1] });
      }
      if (rediscovered || !this.deps.rediscover || attempts.length >= attemptsMax) break;
      rediscovered = true;
      await untilAborted(this.deps.rediscover().catch(() => undefined), [req.signal, this.deps.closed]);
      if (this.deps.pool.order().every((u) => tried.has(u))) break;
    }
    throw new AllEndpointsFailedError(attempts);
  }

  /** Whether the failed attempt `r` ends the request (failoverAfterSent) rather than moving on. */
  private stops(r: Failure): boolean {
    const policy = this.deps.failoverAfterSent;
    if (policy === undefined || policy === true || neverSent(r.error)) return false;
    return policy === false || !policy(r.error);
  }

  /**
   * One endpoint, with one more try after a 401 when the credential could be refreshed. Not
   * async: with a header at hand and nothing to refresh it is `once` itself, one promise less.
   */
  private attempt(endpoint: string, req: OutgoingRequest): Promise<AttemptResult> {
    const auth = this.deps.auth;
    const pending = auth.authorization(endpoint);
    if (typeof pending !== "object" && !auth.refreshAfterUnauthorized) return this.once(endpoint, req, pending);
    return this.attemptRefreshing(endpoint, req, pending);
  }

  /** The wait for a credential counts within the attempt's time limit: the request gets what is left. */
  private async attemptRefreshing(endpoint: string, req: OutgoingRequest, pending: string | undefined | Promise<string | undefined>): Promise<AttemptResult> {
    const { clock } = this.deps.runtime;
    const started = clock.nowMs();
    let authorization = typeof pending === "object" ? await this.credential(pending, endpoint, req.signal) : pending;
    const timeoutMs = this.deps.timeoutMs;
    let r = await this.once(endpoint, req, authorization, timeoutMs > 0 ? Math.max(1, timeoutMs - (clock.nowMs() - started)) : 0);
    if (!(r instanceof Failure) && r.response.status === 401 && this.deps.auth.refreshAfterUnauthorized) {
      if (req.stream) await r.response.body?.cancel().catch(() => undefined);
      if (await this.credential(this.deps.auth.refreshAfterUnauthorized(authorization), endpoint, req.signal)) {
        authorization = await this.credential(Promise.resolve(this.deps.auth.authorization(endpoint)), endpoint, req.signal);
        r = await this.once(endpoint, req, authorization);
      }
    }
    return r;
  }

  /**
   * A credential being made ready (a token provider, a refresh after a 401) within the attempt's
   * time limit: past it the request ends with a TimeoutError (the endpoint is not at fault, and
   * does not cool down). The caller's signal and close() end the wait too.
   */
  private async credential<T>(p: Promise<T>, endpoint: string, signal: AbortSignal | undefined): Promise<T> {
    const scope = this.openScope(this.deps.timeoutMs, signal);
    try {
      return await scope.race(p);
    } catch (err) {
      throw scope.timedOut ? new TimeoutError(`no token within ${this.deps.timeoutMs} ms`, endpoint) : err;
    } finally {
      this.closeScope(scope);
    }
  }

  /** One request to one endpoint: as the fetch keeps its time limit itself, or under a scope. */
  private once(endpoint: string, req: OutgoingRequest, authorization: string | undefined, timeoutMs = this.deps.timeoutMs): Promise<AttemptResult> {
    return this.deps.fetch.boundsAttempts === true ? this.onceBounded(endpoint, req, authorization, timeoutMs) : this.onceScoped(endpoint, req, authorization, timeoutMs);
  }

  /**
   * An attempt over a fetch that ends it itself at the time limit, on the caller's signal and on
   * close() (FetchLike.boundsAttempts: the Node client's): no timer and no race here, which cost a
   * `get` about 3 µs of client CPU. A body without Content-Length, which such a fetch does not
   * bound, is read under a scope for the time left.
   */
  private async onceBounded(endpoint: string, req: OutgoingRequest, authorization: string | undefined, timeoutMs: number): Promise<AttemptResult> {
    const { runtime, closed } = this.deps;
    const started = runtime.clock.nowMs();
    let error: HypercacheError | TransportError;
    try {
      if (closed?.aborted) throw closed.reason;
      const res = await this.deps.fetch(endpoint + req.path, this.init(req, authorization, timeoutMs));
      if (req.stream && res.status === 200) return { response: res, endpoint };
      const declared = res.headers.get("content-length");
      // The declared case by hand rather than through readBounded: one async layer less per get.
      if (declared !== null) refuseDeclared(res, declared, this.boundOf(req), endpoint);
      const bytes = declared !== null ? new Uint8Array(await res.arrayBuffer()) : await this.readScoped(res, endpoint, req, timeoutMs - (runtime.clock.nowMs() - started));
      const answered = this.answerOf(res, bytes, endpoint, req);
      if (!(answered instanceof HypercacheError)) return answered;
      error = answered;
    } catch (err) {
      const outside = req.signal?.aborted ? req.signal : closed?.aborted ? closed : undefined;
      if (outside) throw outside.reason ?? err;
      error = attemptError(err, false, timeoutMs, endpoint);
    }
    return new Failure(endpoint, error, runtime.clock.nowMs() - started);
  }

  /** A body read under a scope of `leftMs` (its reader is cancelled when the scope ends early). */
  private async readScoped(res: ResponseLike, endpoint: string, req: OutgoingRequest, leftMs: number): Promise<Uint8Array> {
    const scope = this.openScope(Math.max(1, leftMs), req.signal);
    try {
      return await scope.race(readBounded(res, this.boundOf(req), endpoint, scope));
    } finally {
      this.closeScope(scope);
    }
  }

  private async onceScoped(endpoint: string, req: OutgoingRequest, authorization: string | undefined, timeoutMs: number): Promise<AttemptResult> {
    const { runtime } = this.deps;
    const started = runtime.clock.nowMs();
    const scope = this.openScope(timeoutMs, req.signal);
    let error: HypercacheError | TransportError;
    let pending: Promise<ResponseLike> | undefined;
    let res: ResponseLike | undefined;
    try {
      // Nothing is sent once the client closed (or the caller aborted) before the attempt began.
      if (scope.stopped) throw scope.reason;
      // The scope's signal ends the connection at close() too; a stream's is the caller's
      // (the watch's per-attempt signal), which must outlive the scope.
      pending = this.deps.fetch(endpoint + req.path, this.init(req, authorization, timeoutMs, req.stream ? req.signal : scope.signal));
      res = await scope.race(pending);
      // A stream's body is the caller's to read and to cancel; any other answer to a stream
      // request (an error, a redirect) is read here, within the time limit, like every answer.
      if (req.stream && res.status === 200) return { response: res, endpoint };
      const answered = this.answerOf(res, await scope.race(readBounded(res, this.boundOf(req), endpoint, scope)), endpoint, req);
      if (!(answered instanceof HypercacheError)) return answered;
      error = answered;
    } catch (err) {
      // An answer whose attempt ended early is not read: its body is let go, whether its headers
      // had come (its body was being read) or come later. The scope does not keep the answer to
      // do it when it stops: holding it there cost 5 µs of garbage collection per get.
      if (scope.stopped) {
        if (res !== undefined) void res.body?.cancel(scope.reason).catch(() => undefined);
        else void pending?.then((late) => late.body?.cancel().catch(() => undefined), () => undefined);
      }
      if (scope.abortedFromOutside) throw scope.reason ?? err;
      error = attemptError(err, scope.timedOut, timeoutMs, endpoint);
    } finally {
      this.closeScope(scope);
    }
    return new Failure(endpoint, error, runtime.clock.nowMs() - started);
  }

  /** A read answer: buffered under 500 unless it is a refusal, else the error it says. */
  private answerOf(res: ResponseLike, bytes: Uint8Array, endpoint: string, req: OutgoingRequest): Answer | HypercacheError {
    if (res.status >= 500) return errorFromAnswer(res.status, new TextDecoder().decode(bytes), endpoint);
    const response = new BufferedResponse(res, bytes, endpoint);
    return this.deps.refusal?.(req.path, response) ?? { response, endpoint };
  }

  /** The fetch's init of one attempt: the request, its credential, the time limit. */
  private init(req: OutgoingRequest, authorization: string | undefined, timeoutMs: number, signal = req.signal): RequestInitLike {
    const headers = authorization === undefined ? req.headers : { ...req.headers, authorization };
    return { method: req.method, headers, body: req.body, signal, timeoutMs, stream: req.stream };
  }

  /**
   * The bound of the answer's body: maxAnswerBytes, but none for a HEAD, whose Content-Length is
   * the length of the value it has no body of (a HEAD of a value over the bound failed).
   */
  private boundOf(req: OutgoingRequest): number {
    return req.method === "HEAD" ? Infinity : (this.deps.answerBytesMax ?? ANSWER_BYTES_MAX);
  }

  /** A scope of `ms` that close() ends (one already closed ends it at once). */
  private openScope(ms: number, signal: AbortSignal | undefined): AttemptScope {
    const scope = new AttemptScope(this.deps.runtime.timers, ms, signal);
    const closed = this.deps.closed;
    if (closed?.aborted) scope.abort(closed.reason);
    this.inflight.add(scope);
    return scope;
  }

  private closeScope(scope: AttemptScope): void {
    scope.end();
    this.inflight.delete(scope);
  }
}

/** The answer of a request an earlier attempt of which may have reached a node. */
function replayed(r: Answer): Answer {
  if (r.response instanceof BufferedResponse) r.response.replayed = true;
  return r;
}
