// Requests no route handler sees still get the JSON error envelope: those Node's HTTP parser
// rejects (a request line or headers past the size cap, a malformed request, headers or body
// not received in time), CONNECT requests, and Expect headers other than 100-continue.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { systemTimers } from "../core/clock.js";
import { waitingAnswers } from "./answer-order.js";
import { lingerAfterEnd } from "./lingering-close.js";

const REASON: Readonly<Record<string, string>> = Object.freeze({
  HPE_HEADER_OVERFLOW: "request line and headers are larger than the 64 KiB limit",
  HPE_URI_TOO_LONG: "request line is larger than the 64 KiB limit",
  ERR_HTTP_REQUEST_TIMEOUT: "request headers or body not received in time",
});

/** Set on a socket once its envelope is written: later parser errors on it are not answered. */
const ANSWERED = Symbol("hypercache.answered");
type Marked = Duplex & { [ANSWERED]?: true };

/** Marks a socket whose answer is written: later parser errors on it are not answered. */
export function markAnswered(socket: Duplex): void {
  (socket as Marked)[ANSWERED] = true;
}

/** The answer that owns the socket now (Node's own bookkeeping; its default clientError handler reads it too). */
type Owned = Duplex & { _httpMessage?: ServerResponse | null };

/**
 * Calls `fn` once no earlier answer of the connection is being written or waits for its turn
 * (answer-order.ts): a parse error or a CONNECT that follows pipelined requests is answered after
 * their answers, never in the middle of one. Nothing is called once the socket is destroyed.
 */
function afterEarlierAnswers(socket: Duplex, fn: () => void): void {
  if (socket.destroyed) return;
  const current = (socket as Owned)._httpMessage;
  if (current == null) {
    if (!(socket instanceof Socket) || waitingAnswers(socket) === 0) return fn();
    // a waiting answer takes the socket on its turn, in a later callback
    systemTimers.defer(() => afterEarlierAnswers(socket, fn));
    return;
  }
  // The error is in the body of the request being answered (still arriving: a body cut short by
  // the client's FIN, say), so the envelope is its answer, now; or its answer has begun (an
  // early refusal), which then ends the connection itself. Waiting for it would wait forever
  // (campaign fuzz seed 70001: a truncated batch/get body and a half-close hung).
  if (current.req !== undefined && !current.req.complete) {
    if (!current.headersSent) fn();
    return;
  }
  let done = false;
  const next = () => {
    if (done) return;
    done = true;
    systemTimers.defer(() => afterEarlierAnswers(socket, fn));
  };
  current.once("finish", next);
  current.once("close", next);
}

/**
 * Writes the envelope after the answers to the requests before it, ends the socket and lingers
 * (lingering-close.ts): a client still sending its body reads the answer instead of a reset.
 * Node's parser keeps failing on the bytes that follow; those later errors find the socket
 * marked and are left to the lingering close. A socket an earlier answer ended (Connection:
 * close) gets no envelope.
 */
function closeWithEnvelope(socket: Duplex, status: string, error: string, code: string): void {
  const body = JSON.stringify({ error, code });
  markAnswered(socket);
  afterEarlierAnswers(socket, () => {
    if (!socket.writable) return;
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    if (socket instanceof Socket) lingerAfterEnd(socket);
  });
}

/** A `clientError` listener for node:http servers. */
export function answerClientError(err: NodeJS.ErrnoException & { code?: string }, socket: Duplex): void {
  if ((socket as Marked)[ANSWERED]) return;
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
