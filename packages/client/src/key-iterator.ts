// The cluster-wide key browser as an async iterator: it follows `next_cursor` over every page and
// yields keys in the server's sort order. Nodes whose listing failed on any page are collected in
// `partialNodes`, so a caller can tell a complete scan from a partial one.
import type { Client } from "openapi-fetch";
import type { paths } from "./gen/client.js";
import { dataOf } from "./values.js";

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
    do {
      const query = { q: this.opts.q, limit: this.opts.pageSize ?? this.pageSize, max: this.opts.max, cursor };
      const data = dataOf(await this.api.GET("/v1/cache/keys", { params: { query }, signal: this.opts.signal }));
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
