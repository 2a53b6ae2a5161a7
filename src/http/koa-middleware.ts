// Middleware shared by the Koa apps: the error envelope, authentication, and unknown routes.
import type Koa from "koa";
import { CacheError, toCacheError } from "../core/errors.js";
import { requireScope, type Authenticator, type Identity, type Scope } from "../auth/index.js";
import type { Logger } from "../log/index.js";
import type { Clock } from "../core/clock.js";
import type { ListenerDurations } from "../observability/index.js";
import { checkQueryLength } from "./query.js";
import { checkSameSite } from "./cross-site.js";
import { closesConnection, envelopeOf } from "./respond.js";

/** Koa state of an authenticated request. */
export interface AppState {
  identity?: Identity;
}

export type AppContext = Koa.ParameterizedContext<AppState>;

/**
 * Turns every thrown error into the JSON envelope with its status. A 5xx never echoes internals:
 * the log gets the cause. 401 answers carry the authenticator's challenge.
 */
export function errorEnvelope(logger: Logger, challenge: () => string): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    try {
      checkQueryLength(ctx.querystring);
      await next();
      // Serialize JSON bodies here, so a failure becomes an envelope instead of Koa's plain text.
      const body: unknown = ctx.body;
      if (body !== null && typeof body === "object" && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== "function") {
        ctx.body = JSON.stringify(body);
        ctx.type = "application/json";
      }
    } catch (err) {
      const e = toCacheError(err);
      if (e.code === "INTERNAL") logger.error("request failed", { method: ctx.method, path: ctx.path, error: String(e.cause ?? e) });
      ctx.status = e.status;
      ctx.body = envelopeOf(e);
      if (e.code === "UNAUTHORIZED" && challenge()) ctx.set("WWW-Authenticate", challenge());
      if (e.retryAfterS !== undefined) ctx.set("Retry-After", String(e.retryAfterS));
      if (e.headers !== undefined) ctx.set(e.headers);
      if (closesConnection(e)) ctx.set("Connection", "close");
    }
  };
}

/** Resolves the caller into `ctx.state.identity` and checks that it holds one of `anyOf`. */
export function authenticated(auth: Authenticator, ...anyOf: Scope[]): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    const r = auth.authenticate(ctx.req);
    const identity = r instanceof Promise ? await r : r;
    if (anyOf.length > 0) requireScope(identity, ...anyOf);
    ctx.state.identity = identity;
    await next();
  };
}

/**
 * Records http.server.request.duration for every request that goes through the Koa stack: the
 * route template @koa/router matched ("" when none did), the method and the final status (of
 * the raw response when a route answers it directly).
 */
export function requestDurations(durations: ListenerDurations, clock: Clock): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    const started = clock.monotonicMs();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      durations.route(typeof matched === "string" ? matched : "").record(ctx.method, status, (clock.monotonicMs() - started) / 1000);
    }
  };
}

/** Refuses state-changing requests a browser sent from another site (cross-site.ts). */
export function sameSiteWrites(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    checkSameSite(ctx.method, ctx.req.headers);
    await next();
  };
}

/** The last middleware: anything unanswered is an unknown route. */
export function unknownRoute(): Koa.Middleware<AppState> {
  return async (ctx) => {
    throw new CacheError("NOT_FOUND", `no route ${ctx.method} ${ctx.path}`, { route: "unknown" });
  };
}

/** Koa reports client disconnects (for example mid-stream) as errors: keep them out of the log. */
export function quietAppErrors(app: Koa<AppState>, logger: Logger): void {
  app.silent = true;
  app.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "ERR_STREAM_PREMATURE_CLOSE" || err.code === "ECONNRESET" || err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") return;
    logger.error("request failed", { error: String(err) });
  });
}
