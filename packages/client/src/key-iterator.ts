// The cluster-wide key browser as an async iterator: it follows `next_cursor` over every page and
// yields keys in the server's sort order. Nodes whose listing failed on any page are collected in
// `partialNodes`, so a caller can tell a complete scan from a partial one. A page that is not the
// server's shape, or whose `next_cursor` is missing or was already followed (a loop), ends the
// iteration with a BadAnswerError: the contract makes `next_cursor` required, empty on the last page.
// So do pages that never end with fresh cursors: an empty page naming a next one (the server pages
// by offset, so only the last page can be empty), or keys past the result set's cap (`max`, at
// most KEYS_MAX_CEILING), which the server's offsets never pass.
import type { Client } from "openapi-fetch";
import { badAnswer } from "./errors.js";
import type { components, paths } from "./gen/client.js";
import { buffered } from "./openapi-bridge.js";
import { dataOf } from "./values.js";

type KeyPage = components["schemas"]["KeyBrowserPage"];

/** The server's ceiling of `max`, the size of a result set. */
const KEYS_MAX_CEILING = 50_000;

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** What is wrong with a key page, or undefined when it has the contract's shape. */
function pageProblem(p: Partial<KeyPage> | null): string | undefined {
  if (p === null || typeof p !== "object") return "a key page that is not a JSON object";
  if (typeof p.next_cursor !== "string") return "a key page without next_cursor";
  if (!isStrings(p.keys) || !isStrings(p.partial_nodes)) return "a key page whose keys or partial_nodes are not lists of strings";
  if (typeof p.truncated !== "boolean" || typeof p.total_matched !== "number") return "a key page without truncated or total_matched";
  if (p.keys.length === 0 && p.next_cursor !== "") return "an empty key page naming a next one";
  return undefined;
}

export interface KeysOptions {
  /** A prefix, or a glob when it holds `*`, `?` or `[`; empty or omitted lists every key. */
  readonly q?: string;
  /** Keys per page (the server clamps above 500); default 500. */
  readonly pageSize?: number;
  /** Size cap of the whole result set (server default 10000, ceiling 50000). */
  readonly max?: number;
  readonly signal?: AbortSignal;
}

export class KeyIterator implements AsyncIterable<string> {
  private readonly partial = new Set<string>();
  /** True once a page said `max` cut the result set. */
  truncated = false;
  /** Size of the (possibly truncated) result set, from the last page. */
  totalMatched: number | undefined;
  /** Pages fetched so far. */
  pages = 0;

  constructor(
    private readonly api: Client<paths>,
    private readonly opts: KeysOptions,
    private readonly pageSize: number,
  ) {}

  /** Ids of nodes whose listing failed on some page: the keys they hold may be missing. */
  get partialNodes(): string[] {
    return [...this.partial];
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    let cursor: string | undefined;
    const followed = new Set<string>();
    const cap = Math.min(this.opts.max ?? KEYS_MAX_CEILING, KEYS_MAX_CEILING);
    let listed = 0;
    do {
      const query = { q: this.opts.q, limit: this.opts.pageSize ?? this.pageSize, max: this.opts.max, cursor };
      const answered = await this.api.GET("/v1/cache/keys", { params: { query }, signal: this.opts.signal });
      const data = dataOf(answered);
      if (cursor !== undefined) followed.add(cursor);
      let problem = pageProblem(data);
      if (!problem && followed.has(data.next_cursor)) problem = `next_cursor ${JSON.stringify(data.next_cursor)} again, a page already followed`;
      if (!problem && (listed += data.keys.length) > cap) problem = `pages of more than max=${cap} keys`;
      if (problem) throw badAnswer(answered.response.status, buffered(answered.response).endpoint, problem);
      this.pages++;
      for (const n of data.partial_nodes) this.partial.add(n);
      this.truncated ||= data.truncated;
      this.totalMatched = data.total_matched;
      yield* data.keys;
      cursor = data.next_cursor;
    } while (cursor !== "");
  }

  /** Every key, as an array. */
  async toArray(): Promise<string[]> {
    const out: string[] = [];
    for await (const k of this) out.push(k);
    return out;
  }
}
