// The source text of one member of a JSON object line, as written: `load` stores a non-string
// value as this text, so a number keeps its digits (JSON.parse then JSON.stringify turned
// 12345678901234567890 into 12345678901234567000, 1e400 into null and 1.10 into 1.1). The line
// has already been parsed by JSON.parse, so the scanner only finds where tokens end: one pass, no
// recursion, linear in the line's length (itself bounded by LINE_BYTES_MAX).

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  return i;
}

/** The index just past the JSON string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") j++;
    else if (c === '"') return j + 1;
  }
  return text.length;
}

/** The index just past the JSON value that opens at `i` (a string, an object, an array or a literal). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; ) {
    const c = text[j] as string;
    if (c === '"') {
      j = stringEnd(text, j);
      if (depth === 0) return j;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return j;
      if (--depth === 0) return j + 1;
    } else if (depth === 0 && (c === "," || WHITESPACE.has(c))) return j;
    j++;
  }
  return text.length;
}

/** `source` without the whitespace between its tokens (the text of strings kept as it is). */
function withoutWhitespace(source: string): string {
  const parts: string[] = [];
  let from = 0;
  for (let j = 0; j < source.length; ) {
    const c = source[j] as string;
    if (c === '"') j = stringEnd(source, j);
    else if (WHITESPACE.has(c)) {
      parts.push(source.slice(from, j));
      j = skipWhitespace(source, j);
      from = j;
    } else j++;
  }
  parts.push(source.slice(from));
  return parts.join("");
}

/**
 * The text of the member `name` of the JSON object `text` (valid JSON: JSON.parse took it), as
 * written but without the whitespace between its tokens; the last one when the name repeats (as
 * JSON.parse keeps the last). Undefined when there is no such member.
 */
export function memberSource(text: string, name: string): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== "{") return undefined;
  let found: string | undefined;
  for (i = skipWhitespace(text, i + 1); text[i] === '"'; ) {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const start = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1); // past the ':'
    const end = valueEnd(text, start);
    if (key === name) found = text.slice(start, end);
    i = skipWhitespace(text, end);
    if (text[i] !== ",") break;
    i = skipWhitespace(text, i + 1);
  }
  return found === undefined ? undefined : withoutWhitespace(found);
}
