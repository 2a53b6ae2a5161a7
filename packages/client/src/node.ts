// @hypercache/client/node: the client for Node. Requests go through an undici 7 Agent (keep-alive
// connection pools per endpoint, TLS options, client certificates for mTLS) via its dispatcher
// API, which costs far less per request than fetch. undici 7 is the last major that runs on
// Node 20 (undici 8 needs Node 22).
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { Agent, buildConnector, errors, type Dispatcher } from "undici";
import { AttemptSignal, deadlineConnector, type Connector } from "./attempt-deadline.js";
import { BodyDeadlines } from "./body-deadlines.js";
import { HypercacheClient as CoreClient } from "./client-with-oidc.js";
import { ATTEMPT_TIMEOUT_MS } from "./failover-transport.js";
import type { FetchLike, HeadersLike, RequestInitLike, ResponseLike } from "./fetch-types.js";
import type { ClientOptions } from "./options.js";
import { systemClock, systemTimers, type Runtime, type Timers } from "./runtime.js";

export * from "./index.js";

/** TLS settings of the connections: a CA for private certificates, and a client certificate (mTLS). */
export interface TlsOptions {
  /** PEM CA bundle that signed the nodes' certificates (default: the system's roots). */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** PEM client certificate, for listeners that require one (mTLS). */
  readonly cert?: string | Buffer;
  /** PEM private key of `cert`. */
  readonly key?: string | Buffer;
  readonly passphrase?: string;
  /** Server name to verify instead of the URL's host. */
  readonly servername?: string;
  /** Default true; false accepts any server certificate (tests only). */
  readonly rejectUnauthorized?: boolean;
}

export interface NodeTransportOptions {
  readonly tls?: TlsOptions;
  /** Connections per endpoint at most (default undici's: no limit). */
  readonly connections?: number;
  /** Idle keep-alive connections close after this long (ms); default 30000, below the server's 60 s. */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Time limit of making a connection, TCP and TLS (ms). Default: the client's `timeoutMs` for
   * the client's own Agent (an attempt's limit covers its connection), else 10000.
   */
  readonly connectTimeoutMs?: number;
}

/** Idle keep-alive time of pooled connections (ms). */
export const KEEP_ALIVE_TIMEOUT_MS = 30_000;

export interface NodeClientOptions extends ClientOptions, NodeTransportOptions {}

/** Headers of an undici answer, read by name. */
class UndiciHeaders implements HeadersLike {
  constructor(private readonly raw: Dispatcher.ResponseData["headers"]) {}
  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  }
}

/** The whole-body time limit of one answer: the sweeper that keeps it, and when it passes. */
interface BodyLimit {
  readonly deadlines: BodyDeadlines;
  readonly deadline: number;
}

/**
 * Answers of the undici dispatcher as the client's ResponseLike. The headers wrapper is made when
 * first read: a `get` that finds its value never reads a header. arrayBuffer() reads the whole
 * body within the request's time limit (body-deadlines.ts).
 */
class UndiciResponse implements ResponseLike {
  readonly status: number;
  private readonly data: Dispatcher.ResponseData["body"];
  private readonly rawHeaders: Dispatcher.ResponseData["headers"];
  private wrapped: HeadersLike | undefined;
  private web: ReadableStream<Uint8Array> | undefined;
  constructor(
    res: Dispatcher.ResponseData,
    private readonly limit: BodyLimit | undefined,
  ) {
    this.status = res.statusCode;
    this.data = res.body;
    this.rawHeaders = res.headers;
  }
  get headers(): HeadersLike {
    return (this.wrapped ??= new UndiciHeaders(this.rawHeaders));
  }
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  /** One web stream over the body, however often it is read (a second one would queue every chunk unread). */
  get body(): ReadableStream<Uint8Array> {
    return (this.web ??= Readable.toWeb(this.data) as unknown as ReadableStream<Uint8Array>);
  }
  text(): Promise<string> {
    return this.data.text();
  }
  json(): Promise<unknown> {
    return this.data.json();
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    const l = this.limit;
    return l === undefined ? this.data.arrayBuffer() : l.deadlines.read(this.data, l.deadline);
  }
}

/**
 * A FetchLike over an undici Agent, and the Agent (close it when done). Given to a client as its
 * `fetch`, every attempt also runs under the client's own attempt scope: the client does not own
 * that Agent, so its close() cannot end requests by destroying it.
 */
export function createNodeFetch(o: NodeTransportOptions = {}, runtime?: Partial<Pick<Runtime, "clock" | "timers">>): { fetch: FetchLike; agent: Agent } {
  const own = ownedNodeFetch(o, runtime);
  // The same requests without `boundsAttempts`.
  return { fetch: (url, init) => own.fetch(url, init), agent: own.agent };
}

/**
 * The fetch of a Node client that owns its Agent. It keeps the attempt's time limit itself
 * (`boundsAttempts`): the connector's and AttemptSignal's over the connection and the headers
 * (attempt-deadline.ts), body-deadlines.ts's over a body read whole (of
 * every answer but a stream's 200); the caller's signal ends the request, and so does destroying
 * the Agent, which the client's close() does. Exported for tests.
 */
export function ownedNodeFetch(o: NodeTransportOptions = {}, runtime?: Partial<Pick<Runtime, "clock" | "timers">>): { fetch: FetchLike; agent: Agent } {
  const clock = runtime?.clock ?? systemClock;
  const timers = runtime?.timers ?? systemTimers;
  const deadlines = new BodyDeadlines(clock, timers);
  const tls = o.tls ?? {};
  const connect = buildConnector({
    ...(tls.ca !== undefined ? { ca: tls.ca as string | Buffer | (string | Buffer)[] } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
    ...(tls.passphrase !== undefined ? { passphrase: tls.passphrase } : {}),
    ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
    // The limit is deadlineConnector's, on a precise timer; undici's runs on a one-second tick.
    timeout: 0,
  });
  const agent = new Agent({
    keepAliveTimeout: o.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
    ...(o.connections !== undefined ? { connections: o.connections } : {}),
    connect: connectWithin(connect, o.connectTimeoutMs ?? ATTEMPT_TIMEOUT_MS, timers),
  });
  const request = async (url: string, init: RequestInitLike): Promise<ResponseLike> => {
    const started = clock.nowMs();
    const slash = url.indexOf("/", url.indexOf("//") + 2);
    const origin = slash < 0 ? url : url.slice(0, slash);
    const path = slash < 0 ? "/" : url.slice(slash);
    const limitMs = init.timeoutMs ?? 0;
    // The limit over the connection and the headers is this attempt's own timer (through the
    // signal); undici's headersTimeout would fire up to a second late. bodyTimeout is the longest
    // pause between two chunks, the whole body's limit is body-deadlines.ts's. A stream has no
    // body limit.
    const signal = new AttemptSignal(init.signal, timers, limitMs);
    let res: Dispatcher.ResponseData;
    try {
      res = await agent.request({
        origin,
        path,
        method: init.method as Dispatcher.HttpMethod,
        headers: init.headers,
        body: init.body ?? null,
        // The part of AbortSignal undici reads (attempt-deadline.ts).
        signal: signal as unknown as AbortSignal,
        headersTimeout: 0,
        bodyTimeout: init.stream ? 0 : limitMs,
      });
    } finally {
      signal.headersCame();
    }
    // A stream's 200 is read by its caller for as long as it lasts; its other answers (an error,
    // a redirect) are read whole, within the limit.
    const unbounded = limitMs <= 0 || (init.stream === true && res.statusCode === 200);
    return new UndiciResponse(res, unbounded ? undefined : { deadlines, deadline: started + limitMs });
  };
  const fetch: FetchLike = Object.assign(request, { boundsAttempts: true as const });
  return { fetch, agent };
}

/** undici's connector with a precise time limit (attempt-deadline.ts), failing as undici's own would. */
function connectWithin(connect: buildConnector.connector, timeoutMs: number, timers: Timers): buildConnector.connector {
  const timeoutError = (o: buildConnector.Options) => new errors.ConnectTimeoutError(`Connect Timeout Error (attempted address: ${o.hostname}:${o.port}, timeout: ${timeoutMs}ms)`);
  return deadlineConnector(connect as Connector<buildConnector.Options, Socket>, timeoutMs, timers, timeoutError) as buildConnector.connector;
}

/**
 * The client for Node: the core client over an undici Agent with the given TLS settings. `close()`
 * also closes the Agent's connections.
 */
export class HypercacheClient extends CoreClient {
  private readonly agent: Agent | undefined;
  private agentClosed: Promise<void> | undefined;

  constructor(options: NodeClientOptions) {
    const own = options.fetch === undefined ? ownedNodeFetch({ ...options, connectTimeoutMs: options.connectTimeoutMs ?? options.timeoutMs }, options.runtime) : undefined;
    super(own ? { ...options, fetch: own.fetch } : options);
    this.agent = own?.agent;
  }

  /**
   * Ends what is in flight (requests reject and watches end with a ClientClosedError), then
   * closes the Agent's connections. Resolves once they are closed, without waiting for any answer.
   */
  override close(): Promise<void> {
    super.close();
    return (this.agentClosed ??= this.agent?.destroy() ?? Promise.resolve());
  }
}
