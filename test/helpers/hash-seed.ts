// Fixed keys for the store's keyed hash in tests (a node draws its own from crypto random bytes).
import type { HashSeed } from "../../src/core/keyed-hash.js";

/** The store hash key tests use unless they compare two. */
export const TEST_HASH_SEED: HashSeed = Object.freeze({ k0: 0x243f6a88, k1: 0x85a308d3 });

/** A second key, for tests that compare stores hashing differently. */
export const OTHER_HASH_SEED: HashSeed = Object.freeze({ k0: 0x13198a2e, k1: 0x03707344 });
