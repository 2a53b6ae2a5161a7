// Key hashing for the ring and the Merkle leaves. Every node runs this same function, so every
// node places a key identically. MurmurHash3's 32-bit mixing over UTF-16 code units. Since anyone
// can compute it, anyone can build keys of one hash32 (a Joux multicollision): the store places
// keys in its own shards and index by a hash keyed per process instead (keyed-hash.ts).

/** A well-mixed unsigned 32-bit hash of `text`. */
export function hash32(text: string, seed = 0): number {
  let h = (seed ^ text.length) | 0;
  for (let i = 0; i < text.length; i++) {
    let k = text.charCodeAt(i);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
