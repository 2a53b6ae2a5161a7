// Query strings: capped at QUERY_STRING_BYTES_MAX and parsed once, in linear time. (Koa's
// ctx.query calls getAll() once per key, which is quadratic in the number of parameters: a 64 KB
// query of repeated names blocked a node for 20 s.)
import type Koa from "koa";
import { badRequest } from "../core/errors.js";
import { QUERY_STRING_BYTES_MAX } from "../core/limits.js";

/** Throws 400 when the raw query string passes the cap. */
export function checkQueryLength(query: string): void {
  if (query.length > QUERY_STRING_BYTES_MAX) {
    throw badRequest(`query string is longer than ${QUERY_STRING_BYTES_MAX} bytes`, { max_query_bytes: QUERY_STRING_BYTES_MAX });
  }
}

/** Parsed query parameters: every value of a name, in order. */
export type QueryParams = Pick<URLSearchParams, "getAll">;

/**
 * Parses a raw query string (without "?"), capped. A query without percent escapes, `+` and a
 * leading `?` is split as it is (the item routes' `?ttl=`, `?lease=...&wait=...`): URLSearchParams costs several
 * times more, which a lease read would pay on every hit. The results are the same.
 */
export function parseQuery(query: string): QueryParams {
  checkQueryLength(query);
  if (query.includes("%")) checkPercentEncoding(query);
  if (query.includes("%") || query.includes("+") || query.startsWith("?")) return new URLSearchParams(query);
  return new PlainQuery(query);
}

/**
 * 400 unless every percent escape of the query is well formed and they decode to UTF-8.
 * URLSearchParams turns a bad escape into its literal text and invalid UTF-8 into U+FFFD, so
 * `q=%C0%80` listed keys under another prefix instead of being refused (a review), where the
 * same bytes in a key path are 400.
 */
function checkPercentEncoding(query: string): void {
  try {
    decodeURIComponent(query);
  } catch {
    throw badRequest("query string is not valid percent-encoded UTF-8");
  }
}

/** A query of literal names and values, split on `&` and the first `=` of each part (empty parts skipped). */
class PlainQuery implements QueryParams {
  /** Names and values, alternating. */
  private readonly pairs: string[] = [];

  constructor(query: string) {
    for (let at = 0; at <= query.length; ) {
      let end = query.indexOf("&", at);
      if (end < 0) end = query.length;
      if (end > at) {
        const eq = query.indexOf("=", at);
        if (eq < 0 || eq > end) this.pairs.push(query.slice(at, end), "");
        else this.pairs.push(query.slice(at, eq), query.slice(eq + 1, end));
      }
      at = end + 1;
    }
  }

  getAll(name: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.pairs.length; i += 2) if (this.pairs[i] === name) out.push(this.pairs[i + 1] as string);
    return out;
  }
}

/** The value of a parameter given at most once; 400 when repeated. */
export function oneParam(params: QueryParams | undefined, name: string): string | undefined {
  if (!params) return undefined;
  const all = params.getAll(name);
  if (all.length > 1) throw badRequest(`query parameter ${name} is given more than once`);
  return all[0];
}

const PARSED = Symbol("parsed query");

/** The value of a query parameter of a router route, given at most once; 400 when repeated. */
export function queryOne(ctx: Koa.Context | Koa.ParameterizedContext<never>, name: string): string | undefined {
  const c = ctx as Koa.Context & { [PARSED]?: QueryParams };
  c[PARSED] ??= parseQuery(c.querystring);
  return oneParam(c[PARSED], name);
}
