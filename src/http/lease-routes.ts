// DELETE /v1/cache/{key}/lease: the holder of a key's stampede lease releases it unfilled (its
// load failed), so that the first miss waiting on the key takes a new lease at once instead of
// when this one runs out. Nothing is deleted: a lease that is still held means no write of the key
// came since the miss. Served on Koa (not a hot route); the key's primary decides (leases.ts).
import type Router from "@koa/router";
import { badRequest } from "../core/errors.js";
import type { Authenticator } from "../auth/index.js";
import { leaseNotHeld, type CacheService } from "../cluster/index.js";
import { authenticated, type AppState } from "./koa-middleware.js";
import { keyInPath, parseLeaseToken } from "./validate.js";

export interface LeaseRouteDeps {
  readonly cache: Pick<CacheService, "releaseLease">;
  readonly auth: Authenticator;
  readonly maxKeyBytes: number;
}

export function addLeaseRoutes(router: Router<AppState>, deps: LeaseRouteDeps): void {
  // The write scope, as for the fill: whoever may fill a lease may give it up.
  router.delete("/v1/cache/:key/lease", authenticated(deps.auth, "write"), async (ctx) => {
    const key = keyInPath(ctx.path, "/v1/cache/", "/lease", deps.maxKeyBytes);
    const token = parseLeaseToken(ctx.req.headers["x-cache-lease"]);
    if (token === undefined) throw badRequest("X-Cache-Lease is required: the token of the lease to release, from the X-Cache-Lease header of the lease read's answer");
    if (!(await deps.cache.releaseLease(key, token))) throw leaseNotHeld(key, "nothing to release");
    ctx.status = 204;
  });
}
