// Conversions between the wire messages of gen/proto and internal records. The wire types stay
// separate from internal ones so the protocol does not drift when internals change.
import { create } from "@bufbuild/protobuf";
import { fromBytes, toBuffer } from "../core/byte-string.js";
import type { VersionedRecord } from "../store/index.js";
import { EntrySchema, type Entry } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";

/** 64-bit wire integers to JS numbers; every value the service produces is below 2^53. */
export function toNumber(v: bigint): number {
  return Number(v);
}

export function toEntry(rec: VersionedRecord): Entry {
  return create(EntrySchema, {
    key: rec.key,
    value: rec.tombstone ? new Uint8Array(0) : toBuffer(rec.value),
    version: BigInt(rec.version),
    origin: rec.origin,
    expiresAtUnixMs: BigInt(rec.expiresAtMs),
    lastUpdatedUnixMs: BigInt(rec.lastUpdatedMs),
    tombstone: rec.tombstone,
  });
}

export function fromEntry(e: Entry): VersionedRecord {
  return {
    key: e.key,
    value: e.tombstone ? "" : fromBytes(e.value),
    version: toNumber(e.version),
    origin: e.origin,
    lastUpdatedMs: toNumber(e.lastUpdatedUnixMs),
    expiresAtMs: e.tombstone ? 0 : toNumber(e.expiresAtUnixMs),
    tombstone: e.tombstone,
  };
}
