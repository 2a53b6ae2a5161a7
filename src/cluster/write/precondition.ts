// What a conditional write or a touch may do, decided from the current record of its key
// (pure). The primary evaluates it under the key's lock (conditional-writer.ts).
import { CacheError } from "../../core/errors.js";
import { etagMatches, etagOf } from "../../core/etag.js";
import type { VersionedRecord } from "../../store/index.js";
import type { ClientWrite, WriteCondition } from "../../transport/index.js";
import { quotedKey } from "../../core/key-check.js";

/** The verdict on a condition: it holds, or it fails with the current ETag (undefined: no live item). */
export type PreconditionVerdict = { readonly holds: true } | { readonly holds: false; readonly currentEtag: string | undefined };

const HOLDS: PreconditionVerdict = Object.freeze({ holds: true });

/**
 * Evaluates `condition` against the live item `live` (undefined when the key is absent, expired
 * or deleted): If-Match holds when the item's strong ETag is listed (or `*` and an item exists);
 * If-None-Match `*` holds when there is no item. No condition always holds.
 */
export function evaluatePrecondition(condition: WriteCondition | undefined, live: VersionedRecord | undefined): PreconditionVerdict {
  if (condition === undefined) return HOLDS;
  const current = live === undefined ? undefined : etagOf(live.version, live.origin);
  if (condition.ifNoneMatch === "*" && current !== undefined) return { holds: false, currentEtag: current };
  if (condition.ifMatch !== undefined && !etagMatches(condition.ifMatch, current)) return { holds: false, currentEtag: current };
  return HOLDS;
}

/** The 412 of a failed precondition; `details.current_etag` only when there is a live item. */
export function preconditionFailed(key: string, currentEtag: string | undefined): CacheError {
  const what = currentEtag === undefined ? "the key has no live item" : `the current ETag is ${currentEtag}`;
  return new CacheError("PRECONDITION_FAILED", `precondition failed for key ${quotedKey(key)}: ${what}; nothing was changed`, currentEtag === undefined ? {} : { current_etag: currentEtag });
}

/**
 * The plain write a conditional write or touch becomes once its condition held: a touch is a set
 * of the live item's value with the new expiry (NOT_FOUND when there is no live item: a touch
 * never brings a value back); other writes lose their condition (a lease fill keeps its token).
 */
export function effectiveWrite(write: ClientWrite, live: VersionedRecord | undefined): ClientWrite {
  if (write.kind !== "touch") return { kind: write.kind, key: write.key, value: write.value, ttlMs: write.ttlMs, ...(write.leaseToken !== undefined ? { leaseToken: write.leaseToken } : {}) };
  if (live === undefined) throw new CacheError("NOT_FOUND", `key ${quotedKey(write.key)} not found: only a live item can be touched`);
  return { kind: "set", key: write.key, value: live.value, ttlMs: write.persist === true ? 0 : write.ttlMs };
}
