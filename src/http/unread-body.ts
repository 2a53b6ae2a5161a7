// Whether a request's body is still unread when its answer starts. An answer written before the
// body was read ends the connection (listener-response.ts); a body that body.ts reads only to
// drop it, within a bound (an oversized body within twice its limit), keeps it usable.
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";

const DISCARDING = Symbol("hypercache.bodyDiscarding");
type Marked = IncomingMessage & { [DISCARDING]?: true };

/** Marks a request whose rest of body is being read and dropped within a bound (body.ts). */
export function markBodyDiscarding(req: IncomingMessage): void {
  (req as Marked)[DISCARDING] = true;
}

/**
 * Reads and discards the rest of a refused request's body while the whole body stays within
 * `capBytes`, so the client reads its answer and the keep-alive connection stays usable; past the
 * cap the connection is closed (an oversized body's 413 in body.ts, a refused peer call in
 * peer-gate.ts).
 */
export function discardRest(req: IncomingMessage, alreadyRead: number, capBytes: number): void {
  markBodyDiscarding(req);
  let seen = alreadyRead;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > capBytes) req.socket.destroy();
  });
  req.resume();
}

/** True when body.ts reads the rest of the body only to drop it. */
export function bodyDiscarding(req: IncomingMessage): boolean {
  return (req as Marked)[DISCARDING] === true;
}

/** True when the request's headers announce a body (a non-zero Content-Length, or a transfer coding). */
export function declaresBody(headers: IncomingHttpHeaders): boolean {
  const length = headers["content-length"];
  return (length !== undefined && length !== "0") || headers["transfer-encoding"] !== undefined;
}

/** True when the request has a body that has not been read to its end, nor is being discarded. */
export function bodyLeftUnread(req: IncomingMessage): boolean {
  return !req.complete && !(req as Marked)[DISCARDING] && declaresBody(req.headers);
}
