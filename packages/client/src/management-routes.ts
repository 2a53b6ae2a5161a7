// The answers and options of the management listener's read and admin routes (what an operator's
// console shows and does), which HypercacheClient calls: identity, membership, ring, hints, the
// cluster key browser one page at a time, a key's copies and value preview, statistics, drain, and
// the maintenance passes. Answers are typed by the generated management types; an error answer
// becomes its typed error (values.ts dataOf). These act on the node that answers: pin the client to one
// management endpoint (see README, "Operator tools") to be sure which one.
import type { components } from "./gen/management.js";

type S = components["schemas"];
/** `GET /me` and `/v1/me`: id, scopes and capabilities. */
export type ManagementIdentity = S["Identity"];
/** `GET /cluster/ring`: each node's primary and owner share of the key space. */
export type RingView = S["Ring"];
/** `GET /dist/hints`: the replay queue per target node, totals, caps and the migration queue. */
export type HintsView = S["Hints"];
/** One page of `GET /cluster/keys`. */
export type KeyBrowserPage = S["KeyBrowserPage"];
/** `GET /cluster/keys/{key}/replicas`: each owner's copy. */
export type KeyReplicas = S["KeyReplicas"];
/** `GET /cluster/keys/{key}/value`: the first 4096 bytes of the value, base64. */
export type ValuePreview = S["ValuePreview"];
/** `GET /stats`: the answering node's store counters. */
export type NodeStats = S["Stats"];
/** `GET /dist/drain`: the drain hand-off's progress. */
export type DrainStatus = S["DrainStatus"];
export type DrainAnswer = S["DrainAnswer"];
export type EvictAnswer = S["EvictAnswer"];
export type ExpireAnswer = S["ExpireAnswer"];
export type ClearAnswer = S["ClearAnswer"];

/** Options every management call takes. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface KeyPageOptions extends CallOptions {
  /** A prefix, or a glob when it holds `*`, `?` or `[`; empty or omitted lists every key. */
  readonly q?: string;
  /** Keys per page (server default 100; clamped to 500). */
  readonly limit?: number;
  /** Size cap of the whole result set (server default 10000, ceiling 50000). */
  readonly max?: number;
  /** `next_cursor` of the previous page; omitted for the first page. */
  readonly cursor?: string;
}
