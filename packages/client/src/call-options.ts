// The options of the single-key calls (client.ts, item-writes.ts).
import type { WriteConditions } from "./conditions.js";
import type { Ttl } from "./duration.js";
import type { Consistency } from "./options.js";

export interface ReadOptions {
  /** How many owners to consult; default the server's `SERVICE_READ_CONSISTENCY`. */
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
}

export interface WriteOptions {
  /** How many owners must acknowledge; default the server's `SERVICE_WRITE_CONSISTENCY` (`quorum` for a conditional write when that is `one`). */
  readonly consistency?: Consistency;
  readonly signal?: AbortSignal;
}

export interface SetOptions extends WriteOptions, WriteConditions {
  /** Time to live: milliseconds or a duration such as "30s"; omitted, the item never expires. */
  readonly ttl?: Ttl;
}

export interface DeleteOptions extends WriteOptions {
  /** Delete only when the item's current ETag is one of these (or, with "*", when it exists); else 412. */
  readonly ifMatch?: string | readonly string[];
}
