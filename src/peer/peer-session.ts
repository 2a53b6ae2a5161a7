// The HTTP/2 session to one peer, as Connect's transport asks for it (a session manager). It
// replaces connect-node's Http2SessionManager for two reasons found by the chaos suite:
// - that manager removes its 'error' listener when it leaves a state, and its keepalive PING
//   timer can still destroy the session with an error afterwards: an unhandled 'error' event
//   that ended the process (connectrpc/connect-es#1795 is the same family);
// - after a partition, a TCP connection whose packets were dropped can stay "established" for
//   minutes while its retransmissions back off, and every call on it times out. Here a call
//   that times out resets the session, so the next call opens a new connection at once. The old
//   connection ends with a TCP reset, not a close: a closed socket keeps retransmitting what it
//   had queued, and after the partition heals the peer received it (a gossip push 25 s late,
//   whose stale suspicions held two nodes' quorum votes for 5 s: chaos seed 40002). A reset drops
//   it (the TCP socket under a TLS connection too: it is opened here, see connectReset).
// Every session keeps an 'error' listener for its whole life; dead peers are found by the
// per-call timeouts and by the membership probes, so there is no keepalive PING.
//
// A session is destroyed on the next turn of the event loop (timers.defer), never in the caller's
// stack. The caller may be running inside this very session's receive callback: a call's answer
// that ends on a DATA frame resolves its promise there, and Node runs the promise reactions
// before nghttp2 has finished with that frame. Destroying the session then resets its streams,
// and Node 20 sends a reset whose code is not CANCEL at once (Http2Stream::SubmitRstStream),
// re-entering nghttp2: the stream whose frame is being processed is freed, and nghttp2 goes on to
// write its shut flags into freed memory. Seen under valgrind in the chaos run, where the last
// drain answer let the shutdown close every session; the glibc heap corruption it leaves
// ("corrupted size vs. prev_size") aborted nodes as they exited. For the same reason a stream of
// this session reset with any code but CANCEL (Connect closes a failed call's stream with
// INTERNAL_ERROR) is reset on the next turn: two such resets in one receive callback free the
// first stream the same way (valgrind: 20 invalid accesses in 5 rounds).
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { Timers } from "../core/clock.js";
import { PEER_RENEW_GRACE_MS } from "../core/limits.js";
import { NotDeliveredError } from "../transport/index.js";
import { idleTimeout } from "./session-idle.js";

export interface PeerSessionOptions {
  readonly timers: Timers;
  /** Time to establish a connection; past it the attempt fails with UNAVAILABLE. */
  readonly connectTimeoutMs: number;
  /** An idle session (no stream open) closes after this long. */
  readonly idleTimeoutMs: number;
  /**
   * The options of http2.connect (TLS material for peer mTLS), read at each new connection so
   * that reloaded TLS files reach the sessions opened after the reload.
   */
  readonly connect: () => http2.SecureClientSessionOptions;
}

export class PeerSession {
  readonly authority: string;
  /** Where the TCP connections go, and whether TLS goes on them (from the authority, once). */
  private readonly endpoint: Endpoint;
  private conn: http2.ClientHttp2Session | undefined;
  private connecting: Promise<http2.ClientHttp2Session> | undefined;
  private closed = false;
  /** Bumped by every reset and retire: a connection that completes after one is not adopted. */
  private generation = 0;
  /** The generation the last reset() ended (-1: none); a retire() alone ends a connection attempt without failing its callers. */
  private resetFrom = -1;
  /** Response chunks read on any stream of this session (Connect reports each one). */
  private readCount = 0;
  private goawayListener: (() => void) | undefined;
  /** The TCP socket under each connection this session opened (under TLS too): what reset() resets. */
  private readonly tcpOf = new WeakMap<http2.ClientHttp2Session, net.Socket>();

  /** The `close` of this session's streams (deferredClose). */
  private readonly closeStream: StreamClose;

  constructor(
    url: string,
    private readonly opts: PeerSessionOptions,
  ) {
    this.closeStream = deferredClose(opts.timers);
    this.authority = new URL(url).origin;
    this.endpoint = endpointOf(this.authority);
  }

  async request(method: string, path: string, headers: http2.OutgoingHttpHeaders, options: Omit<http2.ClientSessionRequestOptions, "signal">): Promise<http2.ClientHttp2Stream> {
    for (let attempt = 0; ; attempt++) {
      const conn = await this.connection();
      try {
        const stream = conn.request({ ...headers, ":method": method, ":path": path }, options);
        stream.close = this.closeStream;
        return stream;
      } catch (err) {
        // The session closed between connecting and this request: open another once.
        if ((conn.closed || conn.destroyed) && attempt === 0) {
          this.forget(conn);
          continue;
        }
        throw err;
      }
    }
  }

  /** Part of Connect's session-manager interface: called for every response chunk read. */
  notifyResponseByteRead(): void {
    this.readCount++;
  }

  /** Response chunks read so far: a sign of life of the connection. */
  get reads(): number {
    return this.readCount;
  }

  /**
   * Resets the session when nothing was read on it since `reads` was `readsAtStart` (a call that
   * timed out on a connection that may be dead); a connection that still answers other calls is
   * kept. True when it reset.
   */
  resetIfSilentSince(readsAtStart: number): boolean {
    if (this.readCount !== readsAtStart) return false;
    this.reset();
    return true;
  }

  /**
   * Drops the current session (a call on it timed out): the next call opens a new connection. The
   * old one is destroyed on the next turn of the event loop (see the top of this file).
   */
  reset(): void {
    const conn = this.drop();
    // Even when the session is destroyed already: after a GOAWAY or an idle close it is, while its
    // socket still holds what it had queued until the peer closes its side.
    if (conn) this.opts.timers.defer(() => abort(conn, this.tcpOf.get(conn)));
  }

  /** Forgets the current connection and any attempt under way (their callers fail); returns it. */
  private drop(): http2.ClientHttp2Session | undefined {
    const conn = this.conn;
    this.resetFrom = this.generation;
    this.generation++;
    this.conn = undefined;
    this.connecting = undefined;
    return conn;
  }

  /**
   * Moves to a new connection without cutting a call (the peer CA changed: the current connection
   * was verified under the old one). The next request opens a connection with the options in use;
   * the current one gets GOAWAY, keeps its open streams until they end, and is destroyed if any
   * is still open after PEER_RENEW_GRACE_MS.
   */
  retire(): void {
    const conn = this.conn;
    this.generation++;
    this.conn = undefined;
    this.connecting = undefined;
    if (conn === undefined || conn.destroyed) return;
    if (!conn.closed) conn.close();
    this.destroyAfterGrace(conn);
  }

  /** Destroys `conn` if it is still open after PEER_RENEW_GRACE_MS (a stream that never ends). */
  private destroyAfterGrace(conn: http2.ClientHttp2Session): void {
    const timer = this.opts.timers.after(PEER_RENEW_GRACE_MS, () => {
      if (!conn.destroyed) this.opts.timers.defer(() => conn.destroy());
    });
    conn.once("close", () => timer.cancel());
  }

  /**
   * `listener` hears, on a later turn of the event loop, that the peer sent GOAWAY on the current
   * connection: the owner then moves its long-lived stream off it (ExchangeChannel.rotate).
   */
  onGoaway(listener: () => void): void {
    this.goawayListener = listener;
  }

  /**
   * Closes the session for good (the node shuts down). Unlike reset() the connection is closed,
   * not reset: the peer still gets what was queued on a healthy connection (the last replica
   * pushes of the shutdown).
   */
  close(): void {
    this.closed = true;
    const conn = this.drop();
    if (conn && !conn.destroyed) this.opts.timers.defer(() => conn.destroy());
  }

  private connection(): Promise<http2.ClientHttp2Session> {
    if (this.closed) return Promise.reject(new NotDeliveredError(`session to ${this.authority} is closed`));
    if (this.conn && !this.conn.closed && !this.conn.destroyed) return Promise.resolve(this.conn);
    this.connecting ??= this.open();
    return this.connecting;
  }

  /**
   * Opens a connection: TCP first, with Node's own choice among the host's addresses (it tries
   * each in turn, on a new handle each time), then TLS and HTTP/2 on the connected socket. TLS
   * wraps the socket's handle, so wrapped before the connect it kept the first handle: a host
   * whose first address refused crashed the process in native code, and one whose first address
   * dropped SYNs never connected (found by a review of f4b39ea).
   */
  private open(): Promise<http2.ClientHttp2Session> {
    const generation = this.generation;
    return new Promise((resolve, reject) => {
      const { host, port } = this.endpoint;
      const tcp = net.connect({ host, port, noDelay: true });
      let conn: http2.ClientHttp2Session | undefined;
      let settled = false;
      /**
       * An attempt that ends after a retire() and no reset (the peer CA changed while it
       * connected, under the old options): its callers wait for a connection opened with the
       * options in use instead of failing or taking one verified under the old CA.
       */
      const retiredOnly = () => generation !== this.generation && this.resetFrom < generation;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        // Only this attempt's own pending promise (after a reset a newer attempt may be pending).
        if (generation === this.generation) this.connecting = undefined;
        const session = conn;
        this.opts.timers.defer(() => {
          if (session !== undefined && !session.destroyed) session.destroy();
          if (!tcp.destroyed) tcp.destroy();
        });
        if (retiredOnly() && !this.closed) resolve(this.connection());
        // No connection: nothing of any call waiting for it was sent.
        else reject(new NotDeliveredError(`cannot connect to peer ${this.authority}: ${connectErrorText(err)}`, { cause: err }));
      };
      const timer = this.opts.timers.after(this.opts.connectTimeoutMs, () => fail(new Error(`no connection within ${this.opts.connectTimeoutMs} ms`)));
      // For the socket's whole life: before HTTP/2 has it an error fails the attempt; afterwards
      // the session reports it (its 'error' below), and this listener keeps it from being unhandled.
      tcp.on("error", (err) => {
        if (conn === undefined) fail(err);
      });
      tcp.once("connect", () => {
        if (settled) return;
        // Reset, retired or closed while connecting (close() resets): this connection belongs to no one.
        if (generation !== this.generation) return fail(new Error("the session was reset while connecting"));
        try {
          conn = sessionOver(this.authority, this.endpoint, tcp, this.opts.connect());
        } catch (err) {
          return fail(err);
        }
        this.tcpOf.set(conn, tcp);
        this.watch(conn, fail, () => {
          timer.cancel();
          if (settled) return;
          if (generation !== this.generation) return fail(new Error("the session was reset while connecting"));
          settled = true;
          this.conn = conn;
          this.connecting = undefined;
          resolve(conn as http2.ClientHttp2Session);
        });
      });
    });
  }

  /** The listeners of a new session: `fail` on an error, `connected` once HTTP/2 is up. */
  private watch(conn: http2.ClientHttp2Session, fail: (err: unknown) => void, connected: () => void): void {
    // For the whole life of the session: an error ends it (its streams fail on their own).
    conn.on("error", (err) => fail(err));
    conn.on("close", () => this.forget(conn));
    conn.on("goaway", () => {
      const current = this.conn === conn;
      this.forget(conn);
      // Not in nghttp2's receive callback (see the top of this file).
      const listener = this.goawayListener;
      if (current && listener !== undefined) this.opts.timers.defer(listener);
      // Node closes the connection once its streams end; one the peer never ends is cut.
      if (current) this.destroyAfterGrace(conn);
    });
    idleTimeout(conn, this.opts.idleTimeoutMs, () => {
      if (!conn.destroyed) conn.close();
    });
    conn.once("connect", connected);
  }

  private forget(conn: http2.ClientHttp2Session): void {
    if (this.conn === conn) this.conn = undefined;
  }
}

type StreamClose = http2.ClientHttp2Stream["close"];

/**
 * A `close` for the streams of one session: with any code but CANCEL (Node defers CANCEL itself
 * inside a receive callback) the stream is reset on the next turn of the event loop; see the top
 * of this file. One function per session, set on each stream as it opens (no allocation per call).
 */
function deferredClose(timers: Timers): StreamClose {
  return function close(this: http2.ClientHttp2Stream, code?: number, callback?: () => void): void {
    const closeNow = Object.getPrototypeOf(this).close as StreamClose;
    if (code === http2.constants.NGHTTP2_CANCEL) closeNow.call(this, code, callback);
    else timers.defer(() => closeNow.call(this, code, callback));
  } as StreamClose;
}

/**
 * What a failed connect says: Node reports a host whose addresses all failed as an AggregateError
 * with an empty message, one error per address.
 */
function connectErrorText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join("; ");
  return err instanceof Error ? err.message : String(err);
}

interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
}

/** Host (without IPv6 brackets), port and scheme of an http or https origin. */
function endpointOf(authority: string): Endpoint {
  const url = new URL(authority);
  const secure = url.protocol === "https:";
  return { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(url.port || (secure ? 443 : 80)), secure };
}

/**
 * http2.connect over `tcp`, a connected socket opened here (TLS, when the authority is https, on
 * top of it as Node's own http2.connect would: ALPN h2, the host for the certificate check, SNI
 * unless the host is an IP address). abort() resets that socket.
 */
function sessionOver(authority: string, { host, port, secure }: Endpoint, tcp: net.Socket, options: http2.SecureClientSessionOptions): http2.ClientHttp2Session {
  return http2.connect(authority, {
    ...options,
    createConnection: () => (secure ? tls.connect({ ...options, host, port, socket: tcp, ALPNProtocols: ["h2"], ...(net.isIP(host) === 0 ? { servername: host } : {}) }) : tcp),
  });
}

/**
 * Destroys a connection that may be dead with a TCP reset (SO_LINGER 0): the kernel drops what
 * it still had queued instead of delivering it once the network heals (see the top of this file).
 */
function abort(conn: http2.ClientHttp2Session, tcp: net.Socket | undefined): void {
  if (tcp !== undefined && !tcp.destroyed) tcp.resetAndDestroy();
  conn.destroy();
}
