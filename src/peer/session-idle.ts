// An idle timeout for an HTTP/2 session that lets go of the session when it ends. Node 20's
// Http2Session.setTimeout arms a timer bound to the session, and ending the session does not
// clear it: a closed session, its socket proxy and what its listeners hold stay reachable until
// the timer fires, the whole idle timeout later (60 s for peers). A dist listener that saw 400
// short sessions a second held 24,000 dead ones and 200 MB more RSS (found by the exchange fuzz
// family). A session ends in one of two ways, and the timer is cleared in both, before Node
// marks the session destroyed (after that, setTimeout(0) does nothing):
// - its destroy() (an error, the end of close() after GOAWAY, a caller's destroy);
// - its socket's close (a peer that dropped the connection): Node's own close listener ends the
//   session without calling destroy(), so ours goes first.
import type http2 from "node:http2";

/** Calls `onIdle` after `ms` without activity on `session`, and forgets the timer when the session ends. */
export function idleTimeout(session: http2.Http2Session, ms: number, onIdle: () => void): void {
  session.setTimeout(ms, onIdle);
  const forget = () => {
    if (!session.destroyed) session.setTimeout(0);
  };
  const destroy = session.destroy.bind(session);
  session.destroy = ((error?: Error, code?: number) => {
    forget();
    destroy(error, code);
  }) as typeof session.destroy;
  session.socket.prependListener("close", forget);
}
