// The peer key page cursor: shard and slot to resume at, opaque to callers.
import { cursorInt, decodeCursor, encodeCursor } from "../core/cursor.js";
import { badRequest } from "../core/errors.js";

export function encodeKeysCursor(shard: number, slot: number): string {
  return encodeCursor({ s: shard, i: slot });
}

/** Shard and slot of a cursor ("" is the start); 400 BAD_REQUEST when malformed. */
export function decodeKeysCursor(text: string, shardCount: number): { shard: number; slot: number } {
  if (text === "") return { shard: 0, slot: 0 };
  const f = decodeCursor(text);
  const shard = f && cursorInt(f, "s");
  const slot = f && cursorInt(f, "i");
  if (shard === undefined || slot === undefined || shard >= shardCount) throw badRequest("invalid cursor");
  return { shard, slot };
}
