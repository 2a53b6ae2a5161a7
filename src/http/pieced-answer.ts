// Answers that carry a large value, written in pieces. An item GET wrote its value in one piece
// (copied to a Buffer, or base64-encoded into its JSON envelope whole), and the GETs that arrive
// in one poll of the event loop are answered back to back: ten readers of one 8 MiB value held
// the loop for 166–299 ms (raw) and 233–567 ms (JSON), and RSS grew by a copy per reader (found
// by a review's stall hunt). A value over PIECED_VALUE_BYTES is written PIECE_BYTES at a time,
// each piece once the socket has taken the one before and a turn later: concurrent readers take
// turns and hold a piece each, not a copy of the value each.
import type { ServerResponse } from "node:http";
import { base64Length, type ByteString } from "../core/byte-string.js";
import type { YieldToLoop } from "../core/clock.js";

/** Values larger than this are written in pieces. */
export const PIECED_VALUE_BYTES = 1024 * 1024;

/** Value bytes per piece: a multiple of 3, so the pieces' base64 joins without padding. */
export const PIECE_BYTES = 3 * 64 * 1024;

/** A piece of an answer and its encoding (latin1: a ByteString or base64; utf8: JSON text). */
export type Piece = readonly [text: string, encoding: "latin1" | "utf8"];

/** The raw value, a piece at a time. */
export function* rawPieces(value: ByteString): Generator<Piece> {
  for (let at = 0; at < value.length; at += PIECE_BYTES) yield [value.slice(at, at + PIECE_BYTES), "latin1"];
}

/**
 * The JSON envelope `{"key":…,"value":"<base64>",…rest}`, the value encoded a piece at a time:
 * the same text as JSON.stringify of the envelope with its fields in that order. The batch get
 * stream writes its found items with the same three parts.
 */
export function* envelopePieces(key: string, value: ByteString, rest: object): Generator<Piece> {
  yield [envelopeHead(key), "utf8"];
  for (const piece of base64Pieces(value, PIECE_BYTES)) yield [piece, "latin1"];
  yield [envelopeTail(rest), "utf8"];
}

/** The bytes of envelopePieces' text (its Content-Length). */
export function envelopeBytes(key: string, value: ByteString, rest: object): number {
  return Buffer.byteLength(envelopeHead(key)) + base64Length(value.length) + Buffer.byteLength(envelopeTail(rest));
}

/** The envelope's text up to its value: `{"key":…,"value":"`. */
export const envelopeHead = (key: string): string => `{"key":${JSON.stringify(key)},"value":"`;

/** The envelope's text after its value: the other fields, from the same serializer. */
export function envelopeTail(rest: object): string {
  const json = JSON.stringify(rest);
  return json === "{}" ? '"}' : `",${json.slice(1)}`;
}

/**
 * `value` as base64, `pieceBytes` of it at a time (a multiple of 3, so the pieces join without
 * padding). The bytes go through one buffer per value, reused for every piece: no Buffer per
 * piece for a later collection to free.
 */
export function* base64Pieces(value: ByteString, pieceBytes: number): Generator<string> {
  const scratch = Buffer.allocUnsafe(Math.min(pieceBytes, value.length));
  for (let at = 0; at < value.length; at += pieceBytes) {
    const n = scratch.write(value.slice(at, at + pieceBytes), "latin1");
    yield scratch.toString("base64", 0, n);
  }
}

/** Bytes of an answer's scratch buffer: the largest piece, a base64 one (the JSON text around it is smaller). */
const SCRATCH_BYTES = base64Length(PIECE_BYTES);

/**
 * Writes `pieces` to `res` (its head already written) and ends it. Each piece is copied into one
 * scratch buffer of the answer's, reused once the socket has taken the piece before: a Buffer per
 * piece, freed only by a later collection, grew RSS by most of a copy of the value per reader.
 * The next piece goes a turn later (`pause`). Stops when the response closes.
 */
export async function writeInPieces(res: ServerResponse, pieces: Iterable<Piece>, pause: YieldToLoop): Promise<void> {
  const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  for (const [text, encoding] of pieces) {
    if (res.destroyed) return;
    if (Buffer.byteLength(text, encoding) > scratch.length) {
      // Larger than any piece the generators make (a long key's JSON head): written as it is.
      if (!res.write(text, encoding)) await drainedOrClosed(res);
      continue;
    }
    const n = scratch.write(text, encoding);
    await writtenOrClosed(res, scratch.subarray(0, n));
    await pause();
  }
  if (!res.destroyed) res.end();
}

/** Resolves once the socket has taken `chunk` (the write's callback), or the response closed. */
function writtenOrClosed(res: ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("close", done);
      resolve();
    };
    res.on("close", done);
    res.write(chunk, done);
  });
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
