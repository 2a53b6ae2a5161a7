// keyedHash32: HalfSipHash-1-3 over a string's UTF-16LE bytes, the store's hash keyed per process.
// Checked against the Linux kernel's hsiphash test vectors (lib/siphash_kunit.c, 32-bit build: key
// bytes 00..07, message bytes 00..n-1), then for what the store needs of it.
import { expect } from "chai";
import { hash32 } from "../../../src/core/hash.js";
import { hashSeedFrom, keyedHash32 } from "../../../src/core/keyed-hash.js";

/** HalfSipHash-1-3 of bytes 00..n-1 under key bytes 00..07, for n = 0, 2, 4, ..., 62. */
const KERNEL_VECTORS_EVEN = [
  0x5814c896, 0xbc4b0e30, 0x7e059ea6, 0xa0080b65, 0x577999b1, 0xe4fa32cf, 0x6b28096c, 0x16658a7c,
  0x8b31d501, 0x06712339, 0x911bb605, 0xf826ef7b, 0x57150ad7, 0x1ec47442, 0x0a4100d0, 0x2331b6a3,
  0xbc6dda8d, 0xb0652033, 0x7c46fb7f, 0xf142997a, 0x05327eb2, 0xf9e5e7c0, 0x11795ab1, 0x9f5fff91,
  0x007783eb, 0xab639262, 0xc368dda6, 0xfa13d379, 0x53ecd77e, 0x33dbb66a, 0x88b4c4cc, 0x74c1ebf8,
];

/** The string whose UTF-16LE bytes are 00, 01, ..., bytes-1 (bytes even). */
function countingBytes(bytes: number): string {
  let s = "";
  for (let i = 0; i < bytes; i += 2) s += String.fromCharCode(i | ((i + 1) << 8));
  return s;
}

describe("core/keyed-hash", () => {
  it("matches the kernel's HalfSipHash-1-3 vectors for every even byte length up to 62", () => {
    const key = hashSeedFrom(Uint8Array.from([0, 1, 2, 3, 4, 5, 6, 7]));
    expect(key).to.deep.equal({ k0: 0x03020100, k1: 0x07060504 });
    const got = KERNEL_VECTORS_EVEN.map((_, i) => keyedHash32(countingBytes(2 * i), key.k0, key.k1));
    expect(got).to.deep.equal(KERNEL_VECTORS_EVEN);
  });

  it("hashSeedFrom reads two little-endian words, takes any key bytes and refuses fewer than 8", () => {
    expect(hashSeedFrom(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0x80, 9]))).to.deep.equal({ k0: 0xffffffff, k1: 0x80000080 });
    expect(() => hashSeedFrom(new Uint8Array(7))).to.throw(RangeError);
  });

  it("returns an unsigned 32-bit integer, the same for the same text and key", () => {
    for (const k of ["", "a", "user:42", "日本", "😀", "x".repeat(10_001)]) {
      const h = keyedHash32(k, 1, 2);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32, k.slice(0, 10)).to.equal(true);
      expect(keyedHash32(k, 1, 2)).to.equal(h);
    }
  });

  it("depends on both words of the key", () => {
    const base = keyedHash32("user:42", 1, 2);
    expect(keyedHash32("user:42", 3, 2)).to.not.equal(base);
    expect(keyedHash32("user:42", 1, 3)).to.not.equal(base);
  });

  it("tells an odd last code unit from padding and texts of other lengths", () => {
    const hashes = ["a", "a\u0000", "\u0000a", "", "\u0000", "ab", "ba", "é", "e"].map((k) => keyedHash32(k, 5, 6));
    expect(new Set(hashes).size).to.equal(hashes.length);
  });

  it("spreads keys evenly over 32 buckets by its low bits (the store's shard choice)", () => {
    const counts = new Array<number>(32).fill(0);
    for (let i = 0; i < 64_000; i++) counts[keyedHash32(`key:${i}`, 0x243f6a88, 0x85a308d3) & 31]! += 1;
    // 2000 expected per bucket; the standard deviation is about 44.
    expect(Math.min(...counts)).to.be.above(1800);
    expect(Math.max(...counts)).to.be.below(2200);
  });

  it("collisions belong to the key: a pair of one hash under one key differs under another, and under hash32", () => {
    // A birthday search for two keys of one keyedHash32 under key (7, 8), then the same pair
    // under key (9, 10): collisions are a matter of the key, not something to precompute.
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const k = `k${i}`;
      const h = keyedHash32(k, 7, 8);
      const prev = seen.get(h);
      if (prev !== undefined) pair = [prev, k];
      seen.set(h, k);
    }
    expect(keyedHash32(pair[0], 7, 8)).to.equal(keyedHash32(pair[1], 7, 8));
    expect(keyedHash32(pair[0], 9, 10)).to.not.equal(keyedHash32(pair[1], 9, 10));
    expect(hash32(pair[0])).to.not.equal(hash32(pair[1]));
  });
});
