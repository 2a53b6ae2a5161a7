// Merkle summaries for anti-entropy (pure). Records fall into `leafCount` leaves by key hash (a
// power of two, so both sides agree on the leaf of every key); a leaf's hash is the XOR of its
// records' 64-bit digests of (key, version, origin, tombstone), independent of order; the root is
// a SHA-256 over the leaves. Two nodes with the same records in the compared key set have the
// same root; a differing leaf names the records to pull.
import { createHash } from "node:crypto";
import { hash32 } from "../../core/hash.js";
import { SCAN_LIMITS } from "../../core/limits.js";
import type { VersionedRecord } from "../../store/index.js";

/** Largest tree: 65536 leaves. */
export const MERKLE_LEAVES_MAX = SCAN_LIMITS.merkleLeavesMax;

/** Leaves for `records` records at about `chunkSize` records per leaf: a power of two. */
export function leafCountFor(records: number, chunkSize: number): number {
  const want = Math.max(1, Math.ceil(records / Math.max(1, chunkSize)));
  let n = 1;
  while (n < want && n < MERKLE_LEAVES_MAX) n *= 2;
  return n;
}

/** True for a valid leaf count: a power of two in 1..65536. */
export function validLeafCount(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= MERKLE_LEAVES_MAX && (n & (n - 1)) === 0;
}

/** Leaf of a key (from its hash32). */
export function leafOf(keyHash: number, leafCount: number): number {
  return (Math.imul(keyHash, 0x9e3779b1) >>> 0) & (leafCount - 1);
}

/** The 64-bit digest of a record's (key, version, origin, tombstone), as two 32-bit halves. */
export function recordDigest(rec: VersionedRecord): [number, number] {
  const text = `${rec.key}\u0000${rec.version}\u0000${rec.origin}\u0000${rec.tombstone ? 1 : 0}`;
  return [hash32(text, 0x51ed270b), hash32(text, 0x2f7a1c39)];
}

/** Accumulates leaf hashes. */
export class MerkleBuilder {
  private readonly words: Uint32Array;
  records = 0;

  constructor(readonly leafCount: number) {
    this.words = new Uint32Array(leafCount * 2);
  }

  add(rec: VersionedRecord, keyHash: number): void {
    const [hi, lo] = recordDigest(rec);
    this.addDigest(keyHash, hi, lo);
  }

  /** Adds a record by its key hash and recordDigest halves. */
  addDigest(keyHash: number, hi: number, lo: number): void {
    const leaf = leafOf(keyHash, this.leafCount);
    this.words[2 * leaf] = ((this.words[2 * leaf] as number) ^ hi) >>> 0;
    this.words[2 * leaf + 1] = ((this.words[2 * leaf + 1] as number) ^ lo) >>> 0;
    this.records++;
  }

  /** Every leaf hash as 16 hex digits, leaf 0 first. */
  leaves(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.leafCount; i++) {
      out.push(((this.words[2 * i] as number).toString(16).padStart(8, "0")) + (this.words[2 * i + 1] as number).toString(16).padStart(8, "0"));
    }
    return out;
  }

  /** The root: SHA-256 over the leaf hashes, hex. */
  root(): string {
    return createHash("sha256").update(Buffer.from(this.words.buffer, this.words.byteOffset, this.words.byteLength)).digest("hex");
  }
}

/** Indices of the leaves that differ between two leaf lists of the same length. */
export function differingLeaves(a: readonly string[], b: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) out.push(i);
  return out;
}
