// The shapes of the answers the client checks before it reads them (answer-checks.ts): for each
// route, the fields that make an answer that route's, with their types. Extra fields are allowed.
import { isBoolean, isNumber, isObjects, isString, isStrings, optional, type Shape } from "./answer-checks.js";

/** The fields of an item envelope (and of a found batch-get result) the client reads. */
export const ITEM_SHAPE: Shape = Object.freeze({
  key: isString,
  value: isString,
  version: isNumber,
  origin: isString,
  last_updated: isString,
  node: isString,
  owners: isStrings,
  ttl_ms: optional(isNumber),
  expires_at: optional(isString),
});

export const PUT_SHAPE: Shape = Object.freeze({ key: isString, stored: isBoolean, bytes: isNumber, node: isString, owners: isStrings });
export const DELETE_SHAPE: Shape = Object.freeze({ key: isString, deleted: isBoolean, node: isString });
/** A batch answer: one result per item, each naming its key and status. */
export const RESULTS_SHAPE: Shape = Object.freeze({ results: isObjects });
export const RESULT_SHAPE: Shape = Object.freeze({ key: isString, status: isNumber });
export const IDENTITY_SHAPE: Shape = Object.freeze({ id: isString, scopes: isStrings, capabilities: isStrings });
// The management views: the fields that say the answer is the view (a console reads the rest).
export const MEMBERS_SHAPE: Shape = Object.freeze({ node: isString, membership_version: isNumber, members: isObjects });
export const RING_SHAPE: Shape = Object.freeze({ node: isString, nodes: isObjects });
export const HINTS_SHAPE: Shape = Object.freeze({ targets: isObjects, total_count: isNumber });
export const KEY_PAGE_SHAPE: Shape = Object.freeze({ keys: isStrings, next_cursor: isString, partial_nodes: isStrings });
export const REPLICAS_SHAPE: Shape = Object.freeze({ key: isString, replicas: isObjects });
export const PREVIEW_SHAPE: Shape = Object.freeze({ key: isString, preview_base64: isString, bytes: isNumber });
export const STATS_SHAPE: Shape = Object.freeze({ node: isString, items: isNumber });
export const DRAIN_STATUS_SHAPE: Shape = Object.freeze({ state: isString, safe_to_stop: isBoolean });
/** A discovery answer: its entries are checked one by one (discovery.ts), an odd one skipped. */
export const ENDPOINTS_SHAPE: Shape = Object.freeze({ endpoints: (v: unknown) => Array.isArray(v) });
