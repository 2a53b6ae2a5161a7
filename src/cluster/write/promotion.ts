// What a node does when forwarding a write to its primary failed (pure).

import type { CacheError } from "../../core/errors.js";

/** The failed forward: its error, and whether the primary answered it (its own 5xx) or never did. */
export interface ForwardFailureFacts {
  readonly failure: CacheError;
  readonly answered: boolean;
}

/**
 * "promote": this node owns the key as a replica and the failure was the primary's or the
 * network's (a transport error, or the primary answered 5xx: unreachable, draining, quorum not
 * reached there, internal), so it coordinates the write itself. "fail": the error goes back to
 * the client as it is; a client error (4xx: a bad key or value) would be refused by every owner
 * alike, and a node that does not own the key has nowhere to put it. An increment the primary
 * answered with 5xx is not taken over either, unless the answer says the primary refused it
 * before adding anything (DRAINING): the primary may have added it already (a QUORUM_FAILED
 * after its own apply), and this node would add it again into its own slot, which the merge
 * keeps beside the primary's (a plain write taken over is the same write again).
 */
export function afterForwardFailure({ failure, answered }: ForwardFailureFacts, ownsKey: boolean, increment: boolean): "promote" | "fail" {
  if (increment && answered && failure.code !== "DRAINING") return "fail";
  return ownsKey && failure.status >= 500 ? "promote" : "fail";
}
