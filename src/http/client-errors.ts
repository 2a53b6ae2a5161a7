// Requests Node's HTTP parser rejects before any handler runs (a request line or headers past
// the size cap, a malformed request, a body cut short) still get the JSON error envelope.
import type { Socket } from "node:net";

const REASON: Readonly<Record<string, string>> = Object.freeze({
  HPE_HEADER_OVERFLOW: "request line and headers are larger than the 64 KiB limit",
  HPE_URI_TOO_LONG: "request line is larger than the 64 KiB limit",
});

/** A `clientError` listener for node:http servers. */
export function answerClientError(err: NodeJS.ErrnoException & { code?: string }, socket: Socket): void {
  if (!socket.writable || (err.code === "ECONNRESET" && !socket.readable)) {
    socket.destroy();
    return;
  }
  const message = REASON[err.code ?? ""] ?? "malformed HTTP request";
  const body = JSON.stringify({ error: message, code: "BAD_REQUEST" });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
