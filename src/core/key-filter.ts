// The key filter of the key browser and the peer key listing. `q` is a glob when it contains
// any of "*", "?", "[", otherwise a literal prefix.
//
// Glob semantics are POSIX fnmatch without FNM_PATHNAME: "/" is an ordinary character.
// picomatch and minimatch are path matchers ("?" and "*" stop at "/", "(a|b)" is special),
// so the glob is compiled here into a list of tokens and matched in O(tokens x key) time at
// worst (the classic wildcard algorithm that backtracks only to the last "*"), never through a
// backtracking regex, which can take exponential time. A character class is compiled once into
// sorted, merged ranges with a bitmap for Latin-1, so testing a character against it is one
// lookup or a binary search however long the class is written. KeyFilter.cost tells scans how
// much a match may cost, counting each class by its search steps, so they pause in proportion:
//   *        any sequence, also empty        ?        exactly one character
//   [abc]    one of the listed characters    [a-z]    a range
//   [!a] [^a] negated class                   []a] [!]a] "]" first in a class is literal
//   \x       the character x, literally
// Malformed (an unterminated class, a reversed or empty class, a trailing "\"): GlobError.

/** A malformed glob. */
export class GlobError extends Error {
  override readonly name = "GlobError";
}

/** Tests keys against a filter. */
export interface KeyFilter {
  readonly kind: "all" | "prefix" | "glob";
  readonly source: string;
  matches(key: string): boolean;
  /**
   * Work units a match of `key` may take, for scans that pause every few thousand units: 1 for
   * a prefix, more for a long glob against a long key (one unit per GLOB_STEPS_PER_UNIT steps of
   * the matcher, a class counting as its search steps).
   */
  cost(key: string): number;
}

const UNIT_COST = () => 1;

/** Longest accepted filter, in characters (a key is at most 4096 bytes). */
export const KEY_FILTER_MAX_CHARS = 4096;

/**
 * Matcher steps (token x key character, a class weighing its search steps) that count as one
 * work unit, about the time a scan spends on one record (a microsecond or two): a scan slice of
 * SCAN_SLICE_RECORDS units then stays within a few milliseconds whatever the glob.
 */
export const GLOB_STEPS_PER_UNIT = 512;

const GLOB_CHARS = /[*?[]/;

/** A compiled character class: a bitmap of the code points below 256, and merged sorted ranges. */
export interface CharClass {
  readonly negate: boolean;
  /** Bit cp of the code points below 256 that the ranges cover. */
  readonly low: Uint32Array;
  /** [lo0, hi0, lo1, hi1, ...]: disjoint, non-adjacent, ascending. */
  readonly ranges: Uint32Array;
  /** Steps of one test against the class at worst: 1 + the binary search. */
  readonly weight: number;
}

type Token =
  | { readonly kind: "star" }
  | { readonly kind: "any" }
  | { readonly kind: "char"; readonly cp: number }
  | { readonly kind: "class"; readonly cls: CharClass };

/** Builds the filter for `q`; throws GlobError for a malformed or oversized glob. */
export function compileKeyFilter(q: string): KeyFilter {
  if (q.length > KEY_FILTER_MAX_CHARS) throw new GlobError(`filter is longer than ${KEY_FILTER_MAX_CHARS} characters`);
  if (q === "") return { kind: "all", source: q, matches: () => true, cost: UNIT_COST };
  if (!GLOB_CHARS.test(q)) return { kind: "prefix", source: q, matches: (key) => key.startsWith(q), cost: UNIT_COST };
  const tokens = parseGlob(q);
  const weight = globWeight(tokens);
  return {
    kind: "glob",
    source: q,
    matches: matcherOf(tokens),
    cost: (key) => 1 + Math.floor((weight * key.length) / GLOB_STEPS_PER_UNIT),
  };
}

/** True when `q` would be treated as a glob. */
export function isGlob(q: string): boolean {
  return GLOB_CHARS.test(q);
}

/** Tests one key against a glob (compiles it; use compileKeyFilter for repeated matching). */
export function globMatches(glob: string, key: string): boolean {
  return matcherOf(parseGlob(glob))(key);
}

/** Matcher steps per key character at worst: one per token, a class its search steps. */
function globWeight(tokens: readonly Token[]): number {
  let w = 0;
  for (const t of tokens) w += t.kind === "class" ? t.cls.weight : 1;
  return w;
}

function parseGlob(glob: string): Token[] {
  const chars = Array.from(glob);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "\\") {
      if (i + 1 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
      tokens.push({ kind: "char", cp: (chars[++i] as string).codePointAt(0) as number });
    } else if (ch === "*") {
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
    } else if (ch === "?") {
      tokens.push({ kind: "any" });
    } else if (ch === "[") {
      const [cls, next] = parseClass(chars, i);
      tokens.push(cls);
      i = next;
    } else {
      tokens.push({ kind: "char", cp: ch.codePointAt(0) as number });
    }
  }
  return tokens;
}

/** Parses the class starting at chars[start] === "["; returns it and the index of its "]". */
function parseClass(chars: string[], start: number): [Token, number] {
  let i = start + 1;
  let negate = false;
  if (chars[i] === "!" || chars[i] === "^") {
    negate = true;
    i++;
  }
  const ranges: Array<[number, number]> = [];
  let first = true;
  for (; i < chars.length; i++) {
    let ch = chars[i] as string;
    if (ch === "]" && !first) {
      if (ranges.length === 0) throw new GlobError("empty character class");
      return [{ kind: "class", cls: compileClass(negate, ranges) }, i];
    }
    first = false;
    if (ch === "\\") {
      if (i + 1 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
      ch = chars[++i] as string;
    }
    const lo = ch.codePointAt(0) as number;
    if (chars[i + 1] === "-" && i + 2 < chars.length && chars[i + 2] !== "]") {
      let hiChar = chars[i + 2] as string;
      let skip = 2;
      if (hiChar === "\\") {
        if (i + 3 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
        hiChar = chars[i + 3] as string;
        skip = 3;
      }
      const hi = hiChar.codePointAt(0) as number;
      if (hi < lo) throw new GlobError(`reversed range ${ch}-${hiChar} in character class`);
      ranges.push([lo, hi]);
      i += skip;
    } else {
      ranges.push([lo, lo]);
    }
  }
  throw new GlobError("unterminated character class: missing ]");
}

/** Sorts and merges the written ranges of a class, and fills its Latin-1 bitmap. */
export function compileClass(negate: boolean, written: ReadonlyArray<readonly [number, number]>): CharClass {
  const sorted = [...written].sort((a, b) => a[0] - b[0]);
  const merged: number[] = [];
  for (const [lo, hi] of sorted) {
    const last = merged.length - 1;
    if (merged.length > 0 && lo <= (merged[last] as number) + 1) merged[last] = Math.max(merged[last] as number, hi);
    else merged.push(lo, hi);
  }
  const low = new Uint32Array(8);
  for (let r = 0; r < merged.length; r += 2) {
    const hi = Math.min(merged[r + 1] as number, 255);
    for (let cp = merged[r] as number; cp <= hi; cp++) low[cp >>> 5] = (low[cp >>> 5] as number) | (1 << (cp & 31));
  }
  const ranges = Uint32Array.from(merged);
  return { negate, low, ranges, weight: 1 + Math.ceil(Math.log2(ranges.length / 2 + 1)) };
}

/** True when the class accepts `cp`: a bitmap lookup below 256, a binary search above. */
export function classAccepts(cls: CharClass, cp: number): boolean {
  let inside: boolean;
  if (cp < 256) {
    inside = ((cls.low[cp >>> 5] as number) & (1 << (cp & 31))) !== 0;
  } else {
    const r = cls.ranges;
    let lo = 0;
    let hi = r.length / 2 - 1;
    inside = false;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (cp < (r[2 * mid] as number)) hi = mid - 1;
      else if (cp > (r[2 * mid + 1] as number)) lo = mid + 1;
      else {
        inside = true;
        break;
      }
    }
  }
  return inside !== cls.negate;
}

/**
 * The tokens in flat arrays, so the matcher's inner loop reads numbers only: kind per token
 * (STAR, ANY, CHAR, CLASS), the code point of a CHAR, the class of a CLASS.
 */
interface Program {
  readonly kinds: Uint8Array;
  readonly cps: Int32Array;
  readonly classes: ReadonlyArray<CharClass | undefined>;
}

const STAR = 0;
const ANY = 1;
const CHAR = 2;
const CLASS = 3;

function programOf(tokens: readonly Token[]): Program {
  const kinds = new Uint8Array(tokens.length);
  const cps = new Int32Array(tokens.length);
  const classes: Array<CharClass | undefined> = [];
  tokens.forEach((t, i) => {
    kinds[i] = t.kind === "star" ? STAR : t.kind === "any" ? ANY : t.kind === "char" ? CHAR : CLASS;
    if (t.kind === "char") cps[i] = t.cp;
    classes.push(t.kind === "class" ? t.cls : undefined);
  });
  return { kinds, cps, classes };
}

/** A matcher of one glob with its own code-point buffer (reused across keys, never shared). */
function matcherOf(tokens: readonly Token[]): (key: string) => boolean {
  const program = programOf(tokens);
  let text = new Int32Array(64);
  return (key) => {
    if (text.length < key.length) text = new Int32Array(Math.max(key.length, 2 * text.length));
    let n = 0;
    for (let i = 0; i < key.length; n++) {
      const cp = key.codePointAt(i) as number;
      text[n] = cp;
      i += cp > 0xffff ? 2 : 1;
    }
    return matchProgram(program, text, n);
  };
}

/**
 * Matches the first `n` code points of `text` in O(tokens x n): on a mismatch it backtracks
 * only to the most recent "*", letting that star swallow one more character.
 */
function matchProgram(p: Program, text: Int32Array, n: number): boolean {
  const { kinds, cps, classes } = p;
  const count = kinds.length;
  let t = 0;
  let s = 0;
  let starT = -1;
  let starS = 0;
  while (s < n) {
    const kind = t < count ? (kinds[t] as number) : -1;
    if (kind === STAR) {
      starT = t++;
      starS = s;
      continue;
    }
    const cp = text[s] as number;
    const ok = kind === ANY || (kind === CHAR && cps[t] === cp) || (kind === CLASS && classAccepts(classes[t] as CharClass, cp));
    if (ok) {
      t++;
      s++;
    } else if (starT >= 0) {
      t = starT + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (t < count && kinds[t] === STAR) t++;
  return t === count;
}
