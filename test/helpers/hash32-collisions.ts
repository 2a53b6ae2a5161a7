// Keys built to collide under hash32 (src/core/hash.ts), as an attacker builds them: a Joux
// multicollision. hash32 mixes one UTF-16 unit per step into a 32-bit state from a known start
// (seed 0 and the key's length), so each stage searches 3-character printable blocks until two
// take the state to the same next state (a birthday search, about 2^16 tries); n stages give
// 2^n keys of one length and one hash32, every choice of one block of each pair. (Ported from
// the review's collide script of 2026-11-30.)

const BLOCK_UNITS = 3;
/** Printable ASCII without the space: "!" to "~". */
const FIRST = 33;
const SPAN = 94;

/** One step of hash32's loop: the state after mixing in the code unit `k`. */
function step(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Two blocks that take the state `s` to one next state, and that state. */
function collidingPair(s: number): { pair: [string, string]; next: number } {
  const seen = new Map<number, string>();
  for (let n = 0; ; n++) {
    const a = FIRST + (n % SPAN);
    const b = FIRST + (Math.floor(n / SPAN) % SPAN);
    const c = FIRST + (Math.floor(n / (SPAN * SPAN)) % SPAN);
    const t = step(step(step(s, a), b), c);
    const block = String.fromCharCode(a, b, c);
    const prev = seen.get(t);
    if (prev !== undefined) return { pair: [prev, block], next: t };
    seen.set(t, block);
  }
}

/** 2^stages distinct keys starting with `prefix`, all of one length and one hash32. */
export function hash32Multicollision(stages: number, prefix = ""): string[] {
  let s = prefix.length + stages * BLOCK_UNITS;
  for (let i = 0; i < prefix.length; i++) s = step(s, prefix.charCodeAt(i));
  const pairs: Array<[string, string]> = [];
  for (let st = 0; st < stages; st++) {
    const { pair, next } = collidingPair(s);
    pairs.push(pair);
    s = next;
  }
  const keys: string[] = [];
  for (let m = 0; m < 2 ** stages; m++) {
    let key = prefix;
    for (let st = 0; st < stages; st++) key += (pairs[st] as [string, string])[(m >>> st) & 1];
    keys.push(key);
  }
  return keys;
}
