// The batch answers. A small one is an object the error middleware serializes; a large one (more
// than STREAMED_ANSWER_BYTES, values, keys and messages counted) is streamed: the JSON is written
// item by item and each value is base64-encoded in pieces as the socket takes them, so a 16 MiB
// answer never exists whole in memory (as base64, as a JSON string and as a Buffer at once) and
// no event-loop turn spends more than a piece's encoding on it. Keys count too: 1,000 failed
// items with keys of 4,096 escaped characters made a 24.7 MB answer, built and written in one
// turn (a review measured /healthz waiting 150–200 ms), though it held no value at all.
import { Readable } from "node:stream";
import type { components } from "../../gen/openapi/client.js";
import { base64Length, toBase64, type ByteString } from "../core/byte-string.js";
import { base64Pieces, envelopeHead, envelopeTail } from "./pieced-answer.js";
import type { YieldToLoop } from "../core/clock.js";

type Schemas = components["schemas"];

/** Answers larger than this (answerBytesEstimate) are streamed. */
export const STREAMED_ANSWER_BYTES = 1024 * 1024;

/** What a result's fields besides its key and value take, about (status, owners, node, a message). */
const RESULT_OVERHEAD_BYTES = 256;

/**
 * Value bytes encoded per piece: a multiple of 3, so the pieces' base64 joins without padding,
 * and small enough (64 KiB of base64) that a piece's strings stay out of V8's large-object space
 * and are reclaimed by the next scavenge instead of piling up until a full collection.
 */
export const VALUE_PIECE_BYTES = 3 * 16 * 1024;

/** Small parts are gathered into chunks of about this many characters before they are written. */
const CHUNK_CHARS = 64 * 1024;

/** A found item whose value is encoded only when it is written. */
export interface FoundResult {
  readonly key: string;
  readonly value: ByteString;
  /** Every other field of the result (status, found, the envelope fields but value). */
  readonly rest: Omit<Schemas["BatchGetResult"], "key" | "value">;
}

export type AnswerResult = Schemas["BatchGetResult"] | FoundResult;

/** A result of any batch answer (get, put, delete): a found one's value is encoded when written. */
type AnyResult = FoundResult | { readonly key: string };

function isFound(r: AnyResult): r is FoundResult {
  return "rest" in r;
}

/**
 * About how large an answer's JSON is: its values as base64, its keys (as characters: an escaped
 * one is larger still, so a key-heavy answer is streamed early), and a fixed allowance a result.
 */
export function answerBytesEstimate(results: readonly AnyResult[]): number {
  let n = 0;
  for (const r of results) n += (isFound(r) ? base64Length(r.value.length) : 0) + r.key.length + RESULT_OVERHEAD_BYTES;
  return n;
}

/** The answer as one object (values encoded now). */
export function answerObject(results: readonly AnswerResult[]): Schemas["BatchGetResponse"] {
  return { results: results.map((r) => (isFound(r) ? { key: r.key, value: toBase64(r.value), ...r.rest } : r)) };
}

/**
 * The answer as a stream of JSON text, one piece of work per chunk pulled, with a turn of the
 * event loop between chunks: on loopback the socket takes every write at once, and without the
 * pause the whole answer would be written in one run of callbacks, holding other requests back.
 */
export function answerStream(results: readonly AnyResult[], pause: YieldToLoop): Readable {
  // One chunk buffered ahead: the next piece is encoded only once the socket has taken the last.
  return Readable.from(paced(answerChunks(results), pause), { objectMode: true, highWaterMark: 1 });
}

async function* paced(chunks: Iterable<string>, pause: YieldToLoop): AsyncGenerator<string> {
  for (const chunk of chunks) {
    yield chunk;
    await pause();
  }
}

/** The JSON text of the answer in chunks (exported for tests). */
export function* answerChunks(results: readonly AnyResult[]): Generator<string> {
  let pending = '{"results":[';
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as AnyResult;
    if (i > 0) pending += ",";
    if (!isFound(r)) {
      pending += JSON.stringify(r);
    } else {
      // The item route's envelope in pieces (pieced-answer.ts), at this answer's piece size.
      yield `${pending}${envelopeHead(r.key)}`;
      yield* base64Pieces(r.value, VALUE_PIECE_BYTES);
      pending = envelopeTail(r.rest);
    }
    if (pending.length >= CHUNK_CHARS) {
      yield pending;
      pending = "";
    }
  }
  yield `${pending}]}`;
}
