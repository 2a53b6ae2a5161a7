// The web dashboard on the management listener: `/` and `/dashboard` redirect to `/dashboard/`,
// which serves index.html, and `/dashboard/assets/{name}` serves the bundled script, style sheet
// and icon, all from memory. No authentication: the files hold no data (the page asks for credentials and calls the
// API routes, which check them). SERVICE_DASHBOARD=off answers 404 on all of them.
import type Router from "@koa/router";
import { CacheError } from "../core/errors.js";
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

export function addDashboardRoutes(router: Router<AppState>, deps: DashboardDeps): void {
  router.get("/", (ctx) => {
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
  router.get("/dashboard/", page);
  router.get("/dashboard", page);
  router.get("/dashboard/assets/:name", (ctx) => {
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

function serve(ctx: AppContext, asset: DashboardAsset): void {
  ctx.set("Content-Security-Policy", DASHBOARD_CSP);
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cache-Control", asset.immutable ? IMMUTABLE_CACHE : "no-cache");
  ctx.set("ETag", asset.etag);
  ctx.vary("Accept-Encoding");
  if (ctx.get("If-None-Match") === asset.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = asset.type;
  if (asset.gzip !== undefined && ctx.acceptsEncodings("gzip", "identity") === "gzip") {
    ctx.set("Content-Encoding", "gzip");
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
}
