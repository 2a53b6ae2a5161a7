// Whether a failed peer call may have reached the peer. A transport rejects a call it knows was
// never sent (no connection could be opened, the stream was never created or was refused
// unprocessed, a local queue or the fault injector refused it) with NotDeliveredError; every
// other failure (a timeout, a connection reset while the call was out) leaves open that the
// peer processed it. A caller that must not apply a call twice (an increment taken over by a
// replica) tells the two apart with neverDelivered.
import { CacheError, hasCause } from "../core/errors.js";

/** A peer call that failed before any of it left this node (UNAVAILABLE). */
export class NotDeliveredError extends CacheError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("UNAVAILABLE", message, undefined, options);
  }
}

/** `err` as a NotDeliveredError, keeping its message (and `err` as its cause). */
export function notDelivered(err: unknown): NotDeliveredError {
  if (err instanceof NotDeliveredError) return err;
  return new NotDeliveredError(err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * True when `err`, or an error in its cause chain, is a NotDeliveredError: the call certainly did
 * not reach the peer. Judged by the local error object, never by message text (a peer's error
 * text travels in messages and must not make this node apply a call the peer processed). So a
 * NotDeliveredError may be the cause only of errors about the same call (Connect's wrapping,
 * fromConnectError), never of a later failure of a call that was sent.
 */
export function neverDelivered(err: unknown): boolean {
  return hasCause(err, (e) => e instanceof NotDeliveredError);
}
