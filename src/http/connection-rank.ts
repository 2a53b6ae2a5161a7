// How spare an open connection of the client or management listener is, for ConnectionSlots
// (connection-slots.ts). Judged only when a listener is at its cap, from what Node keeps on the
// socket, so requests pay nothing for it:
// - an answer pending whose bytes have not moved for `stalledAfterMs` (a client that does not
//   read; it would otherwise hold its slot until the stall timeout): most spare (progress is
//   sampled once a second while the listener is at its cap, see sample());
// - no answer pending and none ever written (a silent connection, one still in its TLS
//   handshake, or one whose first request is still arriving);
// - no answer pending on a keep-alive connection that has had answers (a pooled client between
//   requests): closed only when none of the above is found;
// - an answer pending and moving: stays.
// Node sets `_httpMessage` on the socket while an answer is pending (its own
// closeIdleConnections() reads the same field); a TLS socket keeps the accepted one as `_parent`.
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";

/** The accepted socket under a TLS socket (Node keeps it as `_parent`). */
export const acceptedSocketOf = (socket: Socket): Socket | undefined => (socket as Socket & { _parent?: Socket })._parent;

export const CONNECTION_RANK = { busy: 0, servedIdle: 1, neverServed: 2, stalled: 3 } as const;

type HttpSocket = Socket & { _httpMessage?: unknown };

export class HttpConnectionRanker {
  /** The TLS socket over each accepted socket, once its handshake is done. */
  private readonly tlsOf = new WeakMap<Socket, Socket>();
  /** Bytes handed to the kernel at the last look, and since when that count has not changed. */
  private readonly progress = new WeakMap<Socket, { flushed: number; sinceMs: number }>();

  constructor(
    /** True for an HTTPS listener: an accepted socket without its TLS socket is still in its handshake. */
    private readonly tls: boolean,
    private readonly stalledAfterMs: number,
    private readonly now: () => number,
  ) {}

  /** Records the TLS socket of an accepted one ('secureConnection'). */
  adoptTls(socket: TLSSocket): void {
    const accepted = acceptedSocketOf(socket);
    if (accepted) this.tlsOf.set(accepted, socket);
  }

  /** The rank of an accepted socket (CONNECTION_RANK). */
  rank(accepted: Socket): number {
    const http = this.tlsOf.get(accepted) as HttpSocket | undefined;
    if (http === undefined && this.tls) return CONNECTION_RANK.neverServed;
    const s = http ?? (accepted as HttpSocket);
    if (s._httpMessage == null) return s.bytesWritten > 0 ? CONNECTION_RANK.servedIdle : CONNECTION_RANK.neverServed;
    return this.stalled(s) ? CONNECTION_RANK.stalled : CONNECTION_RANK.busy;
  }

  /**
   * Notes how far an accepted socket's answer has got. The listener calls it for every open
   * connection once a second while it is at its cap, so an answer stuck since before the first
   * admission that needs its slot is known as stuck then.
   */
  sample(accepted: Socket): void {
    const s = this.tlsOf.get(accepted) ?? accepted;
    if ((s as HttpSocket)._httpMessage != null) this.stalled(s);
  }

  /** True when bytes are queued on `s` and none reached the kernel for stalledAfterMs (as far as the samples tell). */
  private stalled(s: Socket): boolean {
    if (s.writableLength === 0) {
      this.progress.delete(s);
      return false;
    }
    const flushed = s.bytesWritten - s.writableLength;
    const seen = this.progress.get(s);
    const now = this.now();
    if (seen === undefined || seen.flushed !== flushed) {
      this.progress.set(s, { flushed, sinceMs: now });
      return false;
    }
    return now - seen.sinceMs >= this.stalledAfterMs;
  }
}
