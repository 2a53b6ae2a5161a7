// The key filter of the key browser and the peer key listing. `q` is a glob when it contains
// any of "*", "?", "[", otherwise a literal prefix.
//
// Glob semantics are POSIX fnmatch without FNM_PATHNAME: "/" is an ordinary character.
// picomatch and minimatch are path matchers ("?" and "*" stop at "/", "(a|b)" is special),
// so the glob is compiled here into a list of tokens and matched in O(tokens x key) time at
// worst (the classic wildcard algorithm that backtracks only to the last "*"), never through a
// backtracking regex, which can take exponential time. KeyFilter.cost tells scans how much a
// match may cost, so they pause in proportion:
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
   * a prefix, more for a long glob against a long key (one unit per 4096 token-characters).
   */
  cost(key: string): number;
}

const UNIT_COST = () => 1;

/** Longest accepted filter, in characters (a key is at most 4096 bytes). */
export const KEY_FILTER_MAX_CHARS = 4096;

const GLOB_CHARS = /[*?[]/;

type Token =
  | { readonly kind: "star" }
  | { readonly kind: "any" }
  | { readonly kind: "char"; readonly cp: number }
  | { readonly kind: "class"; readonly negate: boolean; readonly ranges: ReadonlyArray<readonly [number, number]> };

/** Builds the filter for `q`; throws GlobError for a malformed or oversized glob. */
export function compileKeyFilter(q: string): KeyFilter {
  if (q.length > KEY_FILTER_MAX_CHARS) throw new GlobError(`filter is longer than ${KEY_FILTER_MAX_CHARS} characters`);
  if (q === "") return { kind: "all", source: q, matches: () => true, cost: UNIT_COST };
  if (!GLOB_CHARS.test(q)) return { kind: "prefix", source: q, matches: (key) => key.startsWith(q), cost: UNIT_COST };
  const tokens = parseGlob(q);
  return {
    kind: "glob",
    source: q,
    matches: (key) => matchTokens(tokens, Array.from(key, (c) => c.codePointAt(0) as number)),
    cost: (key) => 1 + Math.floor((tokens.length * key.length) / 4096),
  };
}

/** True when `q` would be treated as a glob. */
export function isGlob(q: string): boolean {
  return GLOB_CHARS.test(q);
}

/** Tests one key against a glob (compiles it; use compileKeyFilter for repeated matching). */
export function globMatches(glob: string, key: string): boolean {
  return matchTokens(parseGlob(glob), Array.from(key, (c) => c.codePointAt(0) as number));
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
      return [{ kind: "class", negate, ranges }, i];
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

function matchOne(t: Token, cp: number): boolean {
  switch (t.kind) {
    case "any":
      return true;
    case "char":
      return t.cp === cp;
    case "class": {
      let inside = false;
      for (const [lo, hi] of t.ranges) {
        if (cp >= lo && cp <= hi) {
          inside = true;
          break;
        }
      }
      return inside !== t.negate;
    }
    case "star":
      return false;
  }
}

/**
 * Matches code points against tokens in O(tokens x text): on a mismatch it backtracks only to
 * the most recent "*", letting that star swallow one more character.
 */
function matchTokens(tokens: readonly Token[], text: readonly number[]): boolean {
  let t = 0;
  let s = 0;
  let starT = -1;
  let starS = 0;
  while (s < text.length) {
    const tok = tokens[t];
    if (tok !== undefined && tok.kind === "star") {
      starT = t++;
      starS = s;
    } else if (tok !== undefined && matchOne(tok, text[s] as number)) {
      t++;
      s++;
    } else if (starT >= 0) {
      t = starT + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (t < tokens.length && (tokens[t] as Token).kind === "star") t++;
  return t === tokens.length;
}
