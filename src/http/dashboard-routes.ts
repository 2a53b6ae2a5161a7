// The web dashboard on the management listener: `/` and `/dashboard` redirect to `/dashboard/`,
// which serves index.html, and `/dashboard/assets/{name}` serves the bundled script, style sheet
// and icon, all from memory. No authentication: the files hold no data (the page asks for credentials and calls the
// API routes, which check them). SERVICE_DASHBOARD=off answers 404 on all of them.
import type Router from "@koa/router";
import type Koa from "koa";
import { CacheError } from "../core/errors.js";
import { parseEtagCondition, type EtagCondition } from "../core/etag.js";
import type { DashboardAsset, DashboardAssets } from "./dashboard-assets.js";
import type { AppContext, AppState } from "./koa-middleware.js";

/**
 * Content-Security-Policy of every dashboard answer: scripts, styles and API calls from this
 * origin only, no inline script, no plug-ins, no framing.
 */
const DASHBOARD_CSP = "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'";

/** Cache-Control of hashed assets: a name never changes its content. */
const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";

export interface DashboardDeps {
  /** SERVICE_DASHBOARD is on. */
  readonly enabled: boolean;
  /** The built files; undefined when dist/dashboard is missing. */
  readonly files: DashboardAssets | undefined;
}

/** Sets the headers of every dashboard answer (redirects and 404s included) before the route runs. */
const secured: Koa.Middleware<AppState> = async (ctx, next) => {
  ctx.set("Content-Security-Policy", DASHBOARD_CSP);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Referrer-Policy", "no-referrer");
  await next();
};

export function addDashboardRoutes(router: Router<AppState>, deps: DashboardDeps): void {
  router.get("/", secured, (ctx) => {
    available(deps);
    ctx.redirect("/dashboard/");
  });
  // The page's asset URLs are relative: they need the trailing slash. The router matches both
  // routes with and without it, so each looks at the path itself.
  const page = (ctx: AppContext) => {
    const files = available(deps);
    if (ctx.path.endsWith("/")) serve(ctx, files.index);
    else ctx.redirect("/dashboard/");
  };
  router.get("/dashboard/", secured, page);
  router.get("/dashboard", secured, page);
  router.get("/dashboard/assets/:name", secured, (ctx) => {
    const name = ctx.params.name as string;
    const asset = available(deps).assets.get(name);
    if (asset === undefined) throw new CacheError("NOT_FOUND", `no dashboard asset ${JSON.stringify(name)}`);
    serve(ctx, asset);
  });
}

function available(deps: DashboardDeps): DashboardAssets {
  if (!deps.enabled) throw new CacheError("NOT_FOUND", "the dashboard is turned off (SERVICE_DASHBOARD=off)");
  if (deps.files === undefined) throw new CacheError("NOT_FOUND", "the dashboard was not built: run npm run build (it writes dist/dashboard)");
  return deps.files;
}

/**
 * Answers `asset`: gzipped when the client takes it. Each representation has its own ETag (a
 * cache that stored one must not revalidate the other with it), and If-None-Match matches it
 * weakly, as RFC 9110 13.1.2 says for GET.
 */
function serve(ctx: AppContext, asset: DashboardAsset): void {
  ctx.set("Cache-Control", asset.immutable ? IMMUTABLE_CACHE : "no-cache");
  ctx.vary("Accept-Encoding");
  const gzip = asset.gzip !== undefined && ctx.acceptsEncodings("gzip", "identity") === "gzip";
  const etag = gzip ? (asset.gzipEtag as string) : asset.etag;
  ctx.set("ETag", etag);
  if (noneMatch(ctx.get("If-None-Match"), etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = asset.type;
  if (gzip) {
    ctx.set("Content-Encoding", "gzip");
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
}

/**
 * Does an If-None-Match value match `etag`? `*`, or a list holding the tag in its strong or weak
 * form (weak comparison). A malformed value is ignored (the file is sent), like a missing one.
 */
function noneMatch(header: string, etag: string): boolean {
  if (header === "") return false;
  let condition: EtagCondition;
  try {
    condition = parseEtagCondition(header, "If-None-Match");
  } catch {
    return false;
  }
  if (condition === "*") return true;
  const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);
  return condition.some((tag) => opaque(tag) === opaque(etag));
}
