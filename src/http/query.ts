// Single-valued query parameters for the router routes.
import type Koa from "koa";
import { badRequest } from "../core/errors.js";

/** The value of a query parameter given at most once; 400 when repeated. */
export function queryOne(ctx: Koa.Context | Koa.ParameterizedContext<never>, name: string): string | undefined {
  const v = (ctx as Koa.Context).query[name];
  if (Array.isArray(v)) throw badRequest(`query parameter ${name} is given more than once`);
  return v;
}
