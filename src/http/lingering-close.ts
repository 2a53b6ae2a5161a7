// Lingering close for HTTP/1.1 connections. Node closes a connection after its last answer
// (Connection: close, a refused body) with `destroySoon`: once the answer is flushed the socket is
// destroyed, and if request bytes are still unread the kernel answers with a reset, which makes
// the client's kernel drop the answer it had already received. A client uploading a large body
// to a route that answers early (401 before the body, 413, a GET with a body) then sees "connection
// reset" instead of its answer. Here the socket half-closes after the answer and keeps reading
// and dropping what the client still sends, within HTTP_LINGER's time and byte bounds.
import type { Socket } from "node:net";
import { systemClock } from "../core/clock.js";
import { HTTP_LINGER } from "../core/limits.js";

type Lingering = Socket & { destroySoon(): void };

function linger(socket: Socket, now: () => number): void {
  if (socket.destroyed) return;
  if (socket.readableEnded) {
    socket.destroy();
    return;
  }
  const started = now();
  let bytes = 0;
  socket.setTimeout(HTTP_LINGER.idleMs, () => socket.destroy());
  socket.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > HTTP_LINGER.bytes || now() - started > HTTP_LINGER.totalMs) socket.destroy();
  });
  socket.once("end", () => socket.destroy());
  socket.resume();
}

/**
 * After an answer written straight to the socket and ended (a request Node's parser refused):
 * once the answer is flushed, reads and drops what the client still sends, within HTTP_LINGER.
 */
export function lingerAfterEnd(socket: Socket, now: () => number = systemClock.monotonicMs): void {
  if (socket.writableFinished) linger(socket, now);
  else socket.once("finish", () => linger(socket, now));
}

/** Replaces the socket's `destroySoon` with a half-close that lingers on unread request bytes. */
export function lingerOnClose(socket: Socket, now: () => number = systemClock.monotonicMs): void {
  const s = socket as Lingering;
  s.destroySoon = function destroySoon(this: Socket) {
    if (this.writable) this.end();
    lingerAfterEnd(this, now);
  };
}
