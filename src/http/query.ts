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

/** Parses a raw query string (without "?"), capped. */
export function parseQuery(query: string): URLSearchParams {
  checkQueryLength(query);
  return new URLSearchParams(query);
}

/** The value of a parameter given at most once; 400 when repeated. */
export function oneParam(params: URLSearchParams | undefined, name: string): string | undefined {
  if (!params) return undefined;
  const all = params.getAll(name);
  if (all.length > 1) throw badRequest(`query parameter ${name} is given more than once`);
  return all[0];
}

const PARSED = Symbol("parsed query");

/** The value of a query parameter of a router route, given at most once; 400 when repeated. */
export function queryOne(ctx: Koa.Context | Koa.ParameterizedContext<never>, name: string): string | undefined {
  const c = ctx as Koa.Context & { [PARSED]?: URLSearchParams };
  c[PARSED] ??= parseQuery(c.querystring);
  return oneParam(c[PARSED], name);
}
