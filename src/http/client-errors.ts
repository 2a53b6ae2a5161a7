// Requests no route handler sees still get the JSON error envelope: those Node's HTTP parser
// rejects (a request line or headers past the size cap, a malformed request, headers or body
// not received in time), CONNECT requests, and Expect headers other than 100-continue.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

const REASON: Readonly<Record<string, string>> = Object.freeze({
  HPE_HEADER_OVERFLOW: "request line and headers are larger than the 64 KiB limit",
  HPE_URI_TOO_LONG: "request line is larger than the 64 KiB limit",
  ERR_HTTP_REQUEST_TIMEOUT: "request headers or body not received in time",
});

function closeWithEnvelope(socket: Duplex, status: string, error: string, code: string): void {
  const body = JSON.stringify({ error, code });
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** A `clientError` listener for node:http servers. */
export function answerClientError(err: NodeJS.ErrnoException & { code?: string }, socket: Duplex): void {
  if (!socket.writable || (err.code === "ECONNRESET" && !socket.readable)) {
    socket.destroy();
    return;
  }
  closeWithEnvelope(socket, "400 Bad Request", REASON[err.code ?? ""] ?? "malformed HTTP request", "BAD_REQUEST");
}

/** A `connect` listener: the listeners are not proxies. */
export function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on("error", () => socket.destroy());
  closeWithEnvelope(socket, "400 Bad Request", "CONNECT is not supported: this is not a proxy", "BAD_REQUEST");
}

/** A `checkExpectation` listener: only `Expect: 100-continue` is understood. */
export function answerExpectation(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({ error: `unsupported Expect header ${JSON.stringify(req.headers.expect ?? "")}: only 100-continue is understood`, code: "BAD_REQUEST" });
  res.writeHead(417, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body), Connection: "close" });
  res.end(body);
}
