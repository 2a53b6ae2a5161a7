// An idle timeout for an HTTP/2 session that lets go of the session when it ends. Node 20's
// Http2Session.setTimeout arms a timer bound to the session, and destroying the session does not
// clear it: a closed session, its socket proxy and what its listeners hold stay reachable until
// the timer fires, the whole idle timeout later (60 s for peers). A dist listener that saw 400
// short sessions a second held 24,000 dead ones and 200 MB more RSS (found by the exchange fuzz
// family). Every way a session ends goes through its destroy() (a socket close, an error, the
// end of close() after GOAWAY), so the timer is cleared there.
import type http2 from "node:http2";

/** Calls `onIdle` after `ms` without activity on `session`, and forgets the timer when the session is destroyed. */
export function idleTimeout(session: http2.Http2Session, ms: number, onIdle: () => void): void {
  session.setTimeout(ms, onIdle);
  const destroy = session.destroy.bind(session);
  session.destroy = ((error?: Error, code?: number) => {
    if (!session.destroyed) session.setTimeout(0);
    destroy(error, code);
  }) as typeof session.destroy;
}
