// A keyed hash for where the store puts a key in its own memory (its shard and its key index), so
// clients cannot choose keys that pile up there: HalfSipHash-1-3 (the 32-bit member of
// Aumasson and Bernstein's SipHash family, which the Linux kernel uses as hsiphash for its hash
// tables) over the text's UTF-16 code units, two to a 32-bit word: the bytes of its UTF-16LE
// encoding, so the kernel's test vectors check it.
//
// Why not hash32 (core/hash.ts) with a random seed. A Joux multicollision needs the internal
// state to collide: with hash32's 32-bit state and a known start, a birthday search of 2^16
// three-unit blocks finds two that take it to the same state, and n such stages give 2^n keys of
// one hash. A secret seed only hides the start: MurmurHash3 under a secret seed was shown to have
// collisions that hold for every seed (Aumasson, Bernstein and Boßlet, "Hash-flooding DoS
// reloaded", 2012, on its 4-byte blocks; hash32 mixes each UTF-16 unit the same way), and 32 bits
// of state are few anyway. Here the 64-bit key enters all four words of a 128-bit state, every
// input word passes through an add-rotate-xor round and the output through three more: without
// the key nobody can compute a state, a birthday search on the state itself would take 2^64
// tries, and no key-independent difference through the rounds is known. So the collisions that
// exist (a 32-bit output collides by chance, as any) differ from key to key and cannot be
// precomputed. Every store draws its own key (server.ts, from crypto random bytes): the ring and
// the Merkle leaves, which every node must compute alike, keep hash32.
//
// Hand-written: no dependency of ours has it, and the npm SipHash packages take bytes, where the
// store has JS strings: encoding every key to UTF-8 on every GET would cost more than the hash.
// It reads two code units a round where hash32 mixes one per step: 23 ns a key of 10 units against
// hash32's 16, 35 against 30 at 20 units, 58 against 76 at 40 (Node 20, one core).

/** The 64-bit key of keyedHash32 as two unsigned 32-bit words (the first 4 bytes little-endian, then the next 4). */
export interface HashSeed {
  readonly k0: number;
  readonly k1: number;
}

/** A hash seed from 8 random bytes (crypto.randomBytes(8)); extra bytes are ignored. */
export function hashSeedFrom(bytes: Uint8Array): HashSeed {
  if (bytes.length < 8) throw new RangeError(`a hash seed takes 8 bytes, got ${bytes.length}`);
  const word = (i: number) => ((bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24)) >>> 0;
  return { k0: word(0), k1: word(4) };
}

/** HalfSipHash-1-3 of the UTF-16LE bytes of `text` under the key (k0, k1): an unsigned 32-bit integer. */
export function keyedHash32(text: string, k0: number, k1: number): number {
  let v0 = k0 | 0;
  let v1 = k1 | 0;
  let v2 = (k0 ^ 0x6c796765) | 0;
  let v3 = (k1 ^ 0x74656462) | 0;
  const n = text.length;
  const end = n & ~1;
  for (let i = 0; i < end; i += 2) {
    const m = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    v3 ^= m;
    // One round (HSIPROUND), inline: a call per round costs more than the round.
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2;
    v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0;
    v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= m;
  }
  // The last word: the byte length's low 8 bits on top, the odd unit (if any) at the bottom.
  const b = ((2 * n) << 24) | (end < n ? text.charCodeAt(end) : 0);
  v3 ^= b;
  for (let r = 0; r < 4; r++) {
    if (r === 1) {
      v0 ^= b;
      v2 ^= 0xff;
    }
    v0 = (v0 + v1) | 0; v1 = (v1 << 5) | (v1 >>> 27); v1 ^= v0; v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0; v3 = (v3 << 8) | (v3 >>> 24); v3 ^= v2;
    v0 = (v0 + v3) | 0; v3 = (v3 << 7) | (v3 >>> 25); v3 ^= v0;
    v2 = (v2 + v1) | 0; v1 = (v1 << 13) | (v1 >>> 19); v1 ^= v2; v2 = (v2 << 16) | (v2 >>> 16);
  }
  return (v1 ^ v3) >>> 0;
}
