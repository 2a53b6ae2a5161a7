// Checks on what peers send: records to apply and writes forwarded to this node as primary.
// Peers are trusted to be cache nodes, not to be free of bugs or clock skew: a record that
// would corrupt the store or poison the version clock is refused with a 400 naming it.
import { withinBound } from "../core/counter-state.js";
import { badRequest, CacheError } from "../core/errors.js";
import { checkKey } from "../core/key-check.js";
import { MAX_DURATION_MS } from "../core/duration.js";
import { ETAG_LIMITS, IDEMPOTENCY_KEY_CHARS_MAX, KEY_BYTES_CEILING, LEASE_LIMITS, PEER_VERSION_AHEAD_MAX_MS, REPLICATION_MAX, TIME_MS_MAX } from "../core/limits.js";
import { isNodeId } from "../core/node-id.js";
import type { VersionedRecord } from "../store/index.js";
import type { ClientWrite, LeaseRelease, LeaseRequest, TouchPush } from "../transport/index.js";

function isTime(ms: number): boolean {
  return Number.isSafeInteger(ms) && ms >= 0 && ms <= TIME_MS_MAX;
}

/**
 * Checks one pushed record. Its version may be at most PEER_VERSION_AHEAD_MAX_MS ahead of this
 * node's clock: a version from far in the future would win every later write of its key and
 * drag this node's version clock with it.
 */
export function checkPeerRecord(rec: VersionedRecord, nowMs: number): void {
  const problem = peerRecordProblem(rec, nowMs);
  if (problem !== undefined) throw problem;
}

/**
 * Why a record received from a peer must not be stored (the 400 checkPeerRecord throws), or
 * undefined when it may. Paths that pull records (anti-entropy, reads, repairs) skip such
 * records instead of failing.
 */
export function peerRecordProblem(rec: VersionedRecord, nowMs: number): CacheError | undefined {
  try {
    checkRecord(rec, nowMs);
    return undefined;
  } catch (err) {
    if (err instanceof CacheError) return err;
    throw err;
  }
}

function checkRecord(rec: VersionedRecord, nowMs: number): void {
  checkKey(rec.key, KEY_BYTES_CEILING, "a pushed record's key");
  if (!isNodeId(rec.origin)) throw badRequest(`a pushed record has an invalid origin ${JSON.stringify(rec.origin.slice(0, 64))}`);
  if (!Number.isSafeInteger(rec.version) || rec.version <= 0) throw badRequest(`a pushed record has an invalid version ${rec.version}`);
  if (versionTooFarAhead(rec.version, nowMs)) {
    const aheadMs = rec.version / 1000 - nowMs;
    throw badRequest(`a pushed record's version ${rec.version} is ${Math.round(aheadMs / 1000)} s ahead of this node's clock (at most ${PEER_VERSION_AHEAD_MAX_MS / 1000} s)`, {
      key: rec.key,
    });
  }
  if (!isTime(rec.lastUpdatedMs)) throw badRequest(`a pushed record has an invalid last-updated time ${rec.lastUpdatedMs}`);
  if (!isTime(rec.expiresAtMs)) throw badRequest(`a pushed record has an invalid expiry ${rec.expiresAtMs}`);
}

/**
 * Why a touch pushed without its value must not be applied (a 400), or undefined when it may:
 * the checks of a pushed record on its new version and times, a base (version and origin of the
 * item touched) below that version, and an owner list of 1 to REPLICATION_MAX ids.
 */
export function touchPushProblem(t: TouchPush, nowMs: number): CacheError | undefined {
  const header: VersionedRecord = { key: t.key, value: "", version: t.version, origin: t.origin, expiresAtMs: t.expiresAtMs, lastUpdatedMs: t.lastUpdatedMs, tombstone: false };
  const problem = peerRecordProblem(header, nowMs);
  if (problem !== undefined) return problem;
  if (!isNodeId(t.baseOrigin) || !Number.isSafeInteger(t.baseVersion) || t.baseVersion <= 0 || t.baseVersion >= t.version) {
    return badRequest(`a pushed touch of version ${t.version} names an invalid base (version ${t.baseVersion}, origin ${JSON.stringify(t.baseOrigin.slice(0, 64))})`);
  }
  if (t.owners.length === 0 || t.owners.length > REPLICATION_MAX) return badRequest(`a pushed touch's owner list holds ${t.owners.length} ids (1 to ${REPLICATION_MAX})`);
  return undefined;
}

/** True when `version` is more than PEER_VERSION_AHEAD_MAX_MS ahead of `nowMs`. */
export function versionTooFarAhead(version: number, nowMs: number): boolean {
  return version / 1000 - nowMs > PEER_VERSION_AHEAD_MAX_MS;
}

/** Checks one forwarded client write; the 400 becomes that write's own result. */
export function checkForwardedWrite(w: ClientWrite): void {
  checkKey(w.key, KEY_BYTES_CEILING, "a forwarded write's key");
  if (!Number.isSafeInteger(w.ttlMs) || w.ttlMs < 0 || w.ttlMs > MAX_DURATION_MS) {
    throw badRequest(`a forwarded write's ttl ${w.ttlMs} ms is out of range (0 to ${MAX_DURATION_MS})`);
  }
  if (w.kind === "touch" && (w.persist === true) === (w.ttlMs > 0)) {
    throw badRequest("a forwarded touch needs exactly one of a positive ttl and persist");
  }
  checkForwardedIfMatch(w.condition?.ifMatch);
  const owners = w.sender?.owners;
  if (owners !== undefined && (owners.length === 0 || owners.length > REPLICATION_MAX)) {
    throw badRequest(`a forwarded write's owner list holds ${owners.length} ids (1 to ${REPLICATION_MAX})`);
  }
  if (w.leaseToken !== undefined && (w.kind !== "set" || w.leaseToken.length === 0 || w.leaseToken.length > LEASE_LIMITS.tokenCharsMax)) {
    throw badRequest(`a forwarded write's lease token must be on a set and 1 to ${LEASE_LIMITS.tokenCharsMax} characters long`);
  }
  if (w.kind === "incr" && (!withinBound(w.delta ?? 0) || !withinBound(w.initial ?? 0) || (w.idempotencyKey ?? "").length > IDEMPOTENCY_KEY_CHARS_MAX)) {
    throw badRequest("a forwarded incr's delta, initial or idempotency key is out of range");
  }
}

/**
 * A forwarded If-Match list stays within what a client may send (ETAG_LIMITS): the primary
 * compares the current ETag with every entry under the key's lock.
 */
function checkForwardedIfMatch(ifMatch: "*" | readonly string[] | undefined): void {
  if (ifMatch === undefined || ifMatch === "*") return;
  if (ifMatch.length > ETAG_LIMITS.tagsMax) throw badRequest(`a forwarded write's If-Match lists more than ${ETAG_LIMITS.tagsMax} entity tags`);
  let chars = 0;
  for (const tag of ifMatch) chars += tag.length;
  if (chars > ETAG_LIMITS.headerCharsMax) throw badRequest(`a forwarded write's If-Match is longer than ${ETAG_LIMITS.headerCharsMax} characters`);
}

/** Checks a lease request a peer forwarded: the key, and the lease and wait within LEASE_LIMITS. */
export function checkLeaseRequest(req: LeaseRequest): void {
  checkKey(req.key, KEY_BYTES_CEILING, "a lease request's key");
  const { leaseMsMin, leaseMsMax, waitMsMax } = LEASE_LIMITS;
  if (!Number.isSafeInteger(req.leaseMs) || req.leaseMs < leaseMsMin || req.leaseMs > leaseMsMax) {
    throw badRequest(`a lease request's lease of ${req.leaseMs} ms is out of range (${leaseMsMin} to ${leaseMsMax})`);
  }
  if (!Number.isSafeInteger(req.waitMs) || req.waitMs < 0 || req.waitMs > waitMsMax) {
    throw badRequest(`a lease request's wait of ${req.waitMs} ms is out of range (0 to ${waitMsMax})`);
  }
}

/** Checks a lease release a peer forwarded: the key, and a token of 1 to LEASE_LIMITS.tokenCharsMax characters. */
export function checkLeaseRelease(req: LeaseRelease): void {
  checkKey(req.key, KEY_BYTES_CEILING, "a lease release's key");
  if (req.token.length === 0 || req.token.length > LEASE_LIMITS.tokenCharsMax) {
    throw badRequest(`a lease release's token must be 1 to ${LEASE_LIMITS.tokenCharsMax} characters`);
  }
}
