// The conditional request parts of the client API, parsed and checked once: If-Match and
// If-None-Match on writes (and their batch-item forms `if_match` / `if_none_match`), and
// If-None-Match on reads. Every malformed or unsupported use is a 400 naming the header.
import type { IncomingHttpHeaders } from "node:http";
import { badRequest } from "../core/errors.js";
import { etagMatches, parseEtagCondition, type EtagCondition } from "../core/etag.js";
import type { WriteCondition } from "../transport/index.js";

/** Which write a condition is for: If-None-Match is a PUT's (or batch put item's) only. */
export type ConditionalWriteKind = "put" | "delete" | "touch" | "incr";

/**
 * The condition of a write from its If-Match / If-None-Match values (undefined when neither is
 * given). 400: both given, If-None-Match other than `*`, If-None-Match on a delete, touch or incr,
 * or a malformed value. `names` are the names the messages use (headers or batch fields).
 */
export function conditionOf(
  ifMatch: string | undefined,
  ifNoneMatch: string | undefined,
  kind: ConditionalWriteKind,
  names: { readonly ifMatch: string; readonly ifNoneMatch: string } = HEADER_NAMES,
): WriteCondition | undefined {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  if (ifMatch !== undefined && ifNoneMatch !== undefined) throw badRequest(`send ${names.ifMatch} or ${names.ifNoneMatch}, not both`);
  if (ifNoneMatch !== undefined) {
    if (kind !== "put") throw badRequest(`${names.ifNoneMatch} is not supported on a ${kind}; use ${names.ifMatch}`);
    if (parseEtagCondition(ifNoneMatch, names.ifNoneMatch) !== "*") throw badRequest(`${names.ifNoneMatch} on a write accepts only *`);
    return { ifNoneMatch: "*" };
  }
  return { ifMatch: parseEtagCondition(ifMatch as string, names.ifMatch) };
}

const HEADER_NAMES = Object.freeze({ ifMatch: "If-Match", ifNoneMatch: "If-None-Match" });
const ITEM_NAMES = Object.freeze({ ifMatch: "if_match", ifNoneMatch: "if_none_match" });

/** The condition of a single-key write from its request headers. */
export function writeConditionOf(headers: IncomingHttpHeaders, kind: ConditionalWriteKind): WriteCondition | undefined {
  return conditionOf(headers["if-match"], headers["if-none-match"], kind);
}

/** The condition of a batch item from its `if_match` / `if_none_match` members (strings). */
export function itemConditionOf(item: Record<string, unknown>, kind: ConditionalWriteKind): WriteCondition | undefined {
  const { if_match: ifMatch, if_none_match: ifNoneMatch } = item;
  if (ifMatch !== undefined && typeof ifMatch !== "string") throw badRequest("if_match must be a string: * or a list of ETags");
  if (ifNoneMatch !== undefined && typeof ifNoneMatch !== "string") throw badRequest('if_none_match must be the string "*"');
  return conditionOf(ifMatch, ifNoneMatch, kind, ITEM_NAMES);
}

/** The If-None-Match of a read, parsed (undefined when absent); 400 when malformed. */
export function readConditionOf(headers: IncomingHttpHeaders): EtagCondition | undefined {
  const value = headers["if-none-match"];
  return value === undefined ? undefined : parseEtagCondition(value, "If-None-Match");
}

/** True when a read with `condition` (If-None-Match) of the item tagged `etag` is 304. */
export function notModified(condition: EtagCondition | undefined, etag: string): boolean {
  return condition !== undefined && etagMatches(condition, etag);
}
