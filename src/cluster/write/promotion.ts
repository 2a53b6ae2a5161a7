// What a node does when forwarding a write to its primary failed (pure).

import type { CacheError } from "../../core/errors.js";

/**
 * "promote": this node owns the key as a replica and the failure was the primary's or the
 * network's (a transport error, or the primary answered 5xx: unreachable, draining, quorum not
 * reached there, internal), so it coordinates the write itself. "fail": the error goes back to
 * the client as it is; a client error (4xx: a bad key or value) would be refused by every owner
 * alike, and a node that does not own the key has nowhere to put it.
 */
export function afterForwardFailure(failure: CacheError, ownsKey: boolean): "promote" | "fail" {
  return ownsKey && failure.status >= 500 ? "promote" : "fail";
}
