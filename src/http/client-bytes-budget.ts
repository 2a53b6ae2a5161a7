// The bytes the client listener holds for its clients at once: request bodies while they arrive
// and are used, and answers until the kernel has taken them. A client that sends a 40-byte GET
// of a large value and never reads held the node to a copy of the value for the 30 to 60 s until
// its stalled answer was dropped: 150 such connections on one 8 MiB value grew a node's RSS by
// 1.2 GB, and the listener takes 16,384 connections (test/hostile/held-bytes.test.ts). Bodies
// and answers over HELD_MIN_BYTES are held against SERVICE_MAX_INFLIGHT_BYTES until their
// response closes (done, or its connection gone); one that would pass the budget is refused 503
// UNAVAILABLE with Retry-After instead: an answer before it is written, a body before it is read
// when its Content-Length does not fit, else at the chunk that passes (the connection then ends
// after the answer, its body unread).
import type { ServerResponse } from "node:http";
import { CacheError } from "../core/errors.js";

/** Bodies and answers up to this many bytes are not counted: the connection cap bounds them (16,384 × 16 KiB = 256 MiB). */
export const HELD_MIN_BYTES = 16 * 1024;

/** Retry-After of a request refused past the budget. */
const RETRY_AFTER_S = 1;

/** What a refusal was for. */
export type HeldKind = "answer" | "body";

export class ClientBytesBudget {
  private held = 0;
  /** Requests refused past the budget since the start, by what would have passed it. */
  readonly refused: Record<HeldKind, number> = { answer: 0, body: 0 };

  /** `maxBytes`: SERVICE_MAX_INFLIGHT_BYTES; 0: no limit. */
  constructor(readonly maxBytes: number) {}

  /** Bytes of bodies and answers held now. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Holds an answer's `bytes` until `res` closes, or throws 503 UNAVAILABLE when that would pass
   * the budget. Answers up to HELD_MIN_BYTES pass uncounted.
   */
  holdAnswer(res: ServerResponse, bytes: number): void {
    // A response already closed (its client went during a slow read) emits no 'close' again.
    if (bytes <= HELD_MIN_BYTES || res.closed) return;
    this.refuseUnlessFits("answer", bytes);
    this.held += bytes;
    res.once("close", () => {
      this.held -= bytes;
    });
  }

  /**
   * Throws 503 UNAVAILABLE when an answer of `bytes` would not fit now, holding nothing: a read
   * checks its likely size before it copies the value out of the store, so that reads refused
   * while the budget is full do not each leave a copy of the value for the next collection.
   */
  checkAnswer(bytes: number): void {
    if (bytes > HELD_MIN_BYTES) this.refuseUnlessFits("answer", bytes);
  }

  /**
   * Counts a request body as it arrives, held until `res` closes. Throws 503 at once when the
   * body's declared length (`declared`) does not fit now; the counter it returns throws 503 at the
   * chunk that would pass the budget. A body counts once it is past HELD_MIN_BYTES, all of it;
   * none for a body declared no larger (the common small write pays no closure).
   */
  bodyCounter(res: ServerResponse, declared: number | undefined): ((chunkBytes: number) => void) | undefined {
    if (declared !== undefined) {
      if (declared <= HELD_MIN_BYTES) return undefined;
      this.refuseUnlessFits("body", declared);
    }
    let seen = 0;
    let counted = 0;
    return (chunkBytes) => {
      seen += chunkBytes;
      // A closed response gave its bytes back (or never held any): nothing more is counted.
      if (seen <= HELD_MIN_BYTES || res.closed) return;
      this.refuseUnlessFits("body", seen - counted);
      if (counted === 0) res.once("close", () => (this.held -= counted));
      this.held += seen - counted;
      counted = seen;
    };
  }

  /** One answer or body larger than the whole budget passes when nothing else is held. */
  private refuseUnlessFits(kind: HeldKind, bytes: number): void {
    if (this.maxBytes <= 0 || this.held === 0 || this.held + bytes <= this.maxBytes) return;
    this.refused[kind]++;
    const what = kind === "answer" ? `this answer (${bytes} bytes)` : `this request's body (${bytes} more bytes)`;
    throw new CacheError(
      "UNAVAILABLE",
      `this node holds ${this.held} bytes of request bodies and answers for its clients, and ${what} would pass SERVICE_MAX_INFLIGHT_BYTES (${this.maxBytes}); retry, or use another node`,
      { held_bytes: this.held, [kind === "answer" ? "answer_bytes" : "body_bytes"]: bytes, max_bytes: this.maxBytes },
      { retryAfterS: RETRY_AFTER_S },
    );
  }
}
