// The key filter of the key browser and the peer key listing. `q` is a glob when it contains
// any of "*", "?", "[", otherwise a literal prefix.
//
// Glob semantics are POSIX fnmatch without FNM_PATHNAME: "/" is an ordinary character.
// picomatch and minimatch are path matchers ("?" and "*" stop at "/", "(a|b)" is special),
// so this small compiler implements the standard rules instead:
//   *        any sequence, also empty        ?        exactly one character
//   [abc]    one of the listed characters    [a-z]    a range
//   [!a] [^a] negated class                   []a] [!]a] "]" first in a class is literal
//   \x       the character x, literally
// Malformed (an unterminated class, a reversed range, a trailing "\"): GlobError.

/** A malformed glob. */
export class GlobError extends Error {
  override readonly name = "GlobError";
}

/** Tests keys against a filter. */
export interface KeyFilter {
  readonly kind: "all" | "prefix" | "glob";
  readonly source: string;
  matches(key: string): boolean;
}

const GLOB_CHARS = /[*?[]/;
// Outside a class "-" is an ordinary character and "\-" is a SyntaxError in a "u" RegExp, so the
// two contexts escape different sets.
const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/g;
const CLASS_SPECIAL = /[\\^\][-]/g;

/** Builds the filter for `q`; throws GlobError for a malformed glob. */
export function compileKeyFilter(q: string): KeyFilter {
  if (q === "") return { kind: "all", source: q, matches: () => true };
  if (!GLOB_CHARS.test(q)) return { kind: "prefix", source: q, matches: (key) => key.startsWith(q) };
  const re = globToRegExp(q);
  return { kind: "glob", source: q, matches: (key) => re.test(key) };
}

/** True when `q` would be treated as a glob. */
export function isGlob(q: string): boolean {
  return GLOB_CHARS.test(q);
}

function escapeChar(ch: string): string {
  return ch.replace(REGEX_SPECIAL, "\\$&");
}

function escapeClassChar(ch: string): string {
  return ch.replace(CLASS_SPECIAL, "\\$&");
}

/** Compiles a glob to an anchored RegExp over code points. */
export function globToRegExp(glob: string): RegExp {
  const chars = Array.from(glob);
  let out = "^";
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "\\") {
      if (i + 1 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
      out += escapeChar(chars[++i] as string);
    } else if (ch === "*") {
      while (chars[i + 1] === "*") i++;
      out += "[^]*";
    } else if (ch === "?") {
      out += "[^]";
    } else if (ch === "[") {
      const [cls, next] = compileClass(chars, i);
      out += cls;
      i = next;
    } else {
      out += escapeChar(ch);
    }
  }
  return new RegExp(`${out}$`, "u");
}

/** Compiles the class starting at chars[start] === "["; returns it and the index of its "]". */
function compileClass(chars: string[], start: number): [string, number] {
  let i = start + 1;
  let negate = false;
  if (chars[i] === "!" || chars[i] === "^") {
    negate = true;
    i++;
  }
  const parts: string[] = [];
  let first = true;
  for (; i < chars.length; i++) {
    let ch = chars[i] as string;
    if (ch === "]" && !first) {
      if (parts.length === 0) throw new GlobError("empty character class");
      return [`[${negate ? "^" : ""}${parts.join("")}]`, i];
    }
    first = false;
    if (ch === "\\") {
      if (i + 1 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
      ch = chars[++i] as string;
    }
    if (chars[i + 1] === "-" && i + 2 < chars.length && chars[i + 2] !== "]") {
      let hi = chars[i + 2] as string;
      let skip = 2;
      if (hi === "\\") {
        if (i + 3 >= chars.length) throw new GlobError("glob ends with an unescaped backslash");
        hi = chars[i + 3] as string;
        skip = 3;
      }
      if ((hi.codePointAt(0) as number) < (ch.codePointAt(0) as number)) {
        throw new GlobError(`reversed range ${ch}-${hi} in character class`);
      }
      parts.push(`${escapeClassChar(ch)}-${escapeClassChar(hi)}`);
      i += skip;
    } else {
      parts.push(escapeClassChar(ch));
    }
  }
  throw new GlobError("unterminated character class: missing ]");
}
