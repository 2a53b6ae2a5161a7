// What an owner that forwarded a write stores of the primary's result, so that the primary need
// not push the write back to it (pure). A plain write's result is the write as the primary
// stamped it (version, origin, expiry). A conditional write or touch travels with the sender's
// view of the key (its owner list, and for a touch the item it holds), and the primary counts
// the sender only when that view allows it (conditional-writer.ts, senderCounts): the sender then
// stores the result before it answers. A touch's result carries no value, so it is stored on top
// of the item the sender held when it forwarded; an owner that holds no value does not offer to
// apply a touch at all.
import type { Owners } from "../../ring/index.js";
import type { RecordHeader, VersionedRecord } from "../../store/index.js";
import type { ClientWrite, WriteOutcome } from "../../transport/index.js";
import { touchedRecord } from "../touched-record.js";

/** What the sender's view and its checks read of a held record: a record or its header (peekHeader) will do. */
export type HeldVersion = Pick<RecordHeader, "version" | "origin" | "tombstone">;

/** A held record (or its header) a touch's result can be applied on: a value (expired or not), not a tombstone. */
export function holdsValue<R extends Pick<RecordHeader, "tombstone">>(held: R | undefined): held is R {
  return held !== undefined && !held.tombstone;
}

/** `write` (conditional) with the sender's view of its key: `owners`, and for a touch `held` (ignored otherwise). */
export function withSenderView(write: ClientWrite, owners: Owners, held: HeldVersion | undefined): ClientWrite {
  const base = write.kind === "touch" && holdsValue(held) ? held : undefined;
  return { ...write, sender: { owners: owners.ids, baseVersion: base?.version ?? 0, baseOrigin: base?.origin ?? "" } };
}

/** The record the primary stamped for a forwarded set or remove. */
export function stampedRecord(write: ClientWrite, outcome: WriteOutcome): VersionedRecord {
  const tombstone = write.kind === "remove";
  return {
    key: write.key,
    value: tombstone ? "" : write.value,
    version: outcome.version,
    origin: outcome.origin,
    lastUpdatedMs: Math.floor(outcome.version / 1000),
    expiresAtMs: tombstone ? 0 : outcome.expiresAtMs,
    tombstone,
  };
}

/**
 * The record a counted sender stores for the result of `sent` (the write with the view it was
 * forwarded with): the stamped write, or for a touch the item it held then with the new version
 * and expiry. Undefined when a touch's item is no longer held (replaced, evicted).
 */
export function resultRecord(sent: ClientWrite, outcome: WriteOutcome, held: VersionedRecord | undefined): VersionedRecord | undefined {
  if (sent.kind !== "touch") return stampedRecord(sent, outcome);
  const view = sent.sender;
  if (view === undefined) return undefined;
  const { version, origin, expiresAtMs } = outcome;
  return touchedRecord(held, { baseVersion: view.baseVersion, baseOrigin: view.baseOrigin, version, origin, expiresAtMs, lastUpdatedMs: Math.floor(version / 1000) });
}

/**
 * True when `held` is the result or a later write of the same coordinator (its versions only
 * grow): a counted sender that holds it need not store the result to answer.
 */
export function holdsResultOrLater(held: HeldVersion | undefined, outcome: WriteOutcome): boolean {
  return held !== undefined && held.origin === outcome.origin && held.version >= outcome.version;
}
