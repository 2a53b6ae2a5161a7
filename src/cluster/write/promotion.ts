// What a node does when forwarding a write to its primary failed (pure).

import { CacheError, isErrorCode } from "../../core/errors.js";
import type { WriteOutcome } from "../../transport/index.js";

/**
 * How far a failed forward got: the primary answered it (its error is its real outcome), it
 * certainly never reached the primary (transport/delivery.ts), or it may have (a timeout, a
 * connection lost while the call was out: the primary may have applied it and be working on it).
 */
export type ForwardDelivery = "answered" | "never" | "maybe";

/** The failed forward: its error, and how far it got. */
export interface ForwardFailureFacts {
  readonly failure: CacheError;
  readonly delivery: ForwardDelivery;
}

/**
 * "promote": this node owns the key as a replica and the failure was the primary's or the
 * network's (a transport error, or the primary answered 5xx: unreachable, draining, quorum not
 * reached there, internal), so it coordinates the write itself. "fail": the error goes back to
 * the client as it is; a client error (4xx: a bad key or value) would be refused by every owner
 * alike, and a node that does not own the key has nowhere to put it. An increment the primary
 * answered with a failure that may come after its own add is not taken over either
 * (mayHaveAdded): this node would add it again into its own slot, which the merge keeps beside
 * the primary's (a plain write taken over is the same write again). Nor is an increment whose
 * forward may have reached the primary without an answer (a timeout, a connection reset): the
 * primary may have added it, or may still.
 */
export function afterForwardFailure({ failure, delivery }: ForwardFailureFacts, ownsKey: boolean, increment: boolean): "promote" | "fail" {
  if (increment && delivery === "maybe") return "fail";
  if (increment && delivery === "answered" && mayHaveAdded(failure)) return "fail";
  return ownsKey && failure.status >= 500 ? "promote" : "fail";
}

/**
 * Whether a primary's failure answer leaves open that it applied the write. After its own apply
 * a coordinator fails only with the QUORUM_FAILED of too few acknowledgements, which names them
 * (`details.acknowledged`), or unexpectedly (INTERNAL). Every other failure comes before it
 * applies anything: DRAINING, UNAVAILABLE (its clock is off, the key's queue is full, no slot
 * left, a late forward), the minority side's QUORUM_FAILED (`visible_nodes`) and the failed
 * quorum read before an add (`answered`). A QUORUM_FAILED without details (an older node) may
 * have applied.
 */
export function mayHaveAdded(failure: CacheError): boolean {
  if (failure.code === "INTERNAL") return true;
  if (failure.code !== "QUORUM_FAILED") return false;
  return failure.details === undefined || "acknowledged" in failure.details;
}

/**
 * The primary's failure answer to a forwarded write, as the error this node passes on: its code,
 * message and details as it gave them (an older primary sends no details: a precondition
 * failure's ETag then comes from its own field), and its Retry-After when the details name one
 * (`retry_after_s`: a store over its byte budget; without it, a client writing through another
 * node got the 503 without Retry-After, a review found).
 */
export function primaryFailure(outcome: WriteOutcome): CacheError {
  const code = isErrorCode(outcome.errorCode) ? outcome.errorCode : "INTERNAL";
  const details = outcome.errorDetails ?? (code === "PRECONDITION_FAILED" ? (outcome.currentEtag === undefined ? {} : { current_etag: outcome.currentEtag }) : undefined);
  const retry = details?.retry_after_s;
  const retryAfterS = typeof retry === "number" && Number.isInteger(retry) && retry > 0 && retry <= 3600 ? retry : undefined;
  return new CacheError(code, outcome.errorMessage, details, retryAfterS === undefined ? undefined : { retryAfterS });
}
