// The bound of an answer's body (the client's maxAnswerBytes): a declared Content-Length over it
// fails the attempt before any byte is read, a body without one is cut off once it passes it. A
// compressed answer's Content-Length is the size of the compressed bytes, while the platform fetch
// hands over the body decoded: with a Content-Encoding the body is counted as it is read.
import type { AttemptScope } from "./attempt-scope.js";
import { badAnswer, type HypercacheError } from "./errors.js";
import type { ResponseLike } from "./fetch-types.js";

/** The error of an answer over the client's maxAnswerBytes. */
function answerTooLarge(status: number, endpoint: string, max: number): HypercacheError {
  return badAnswer(status, endpoint, `an answer over ${max} bytes (the client's maxAnswerBytes)`);
}

/** Throws (and lets the body go) when a declared Content-Length is over `max`. */
export function refuseDeclared(res: ResponseLike, declared: string, max: number, endpoint: string): void {
  if (Number(declared) <= max) return;
  void res.body?.cancel().catch(() => undefined);
  throw answerTooLarge(res.status, endpoint, max);
}

/**
 * The answer's body, at most `max` bytes: a declared Content-Length over it fails before any byte
 * is read; a body without one (or compressed: the length is not the decoded body's) is read chunk
 * by chunk and cancelled once it passes `max`.
 */
export async function readBounded(res: ResponseLike, max: number, endpoint: string, scope?: AttemptScope): Promise<Uint8Array> {
  const tooLarge = () => answerTooLarge(res.status, endpoint, max);
  const declared = res.headers.get("content-encoding") === null ? res.headers.get("content-length") : null;
  if (declared !== null) {
    refuseDeclared(res, declared, max, endpoint);
    return new Uint8Array(await res.arrayBuffer());
  }
  const body = res.body;
  if (body === null) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.byteLength > max) throw tooLarge();
    return bytes;
  }
  const reader = body.getReader();
  scope?.holds(reader);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        void reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

