// /v1/me and /v1/me/can: who the caller is and whether it holds a capability. Served on the
// client and the management listener alike; the management listener adds /me, the same answer
// for any authenticated identity (the dashboard decides which controls to show with it).
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import { badRequest } from "../core/errors.js";
import { capabilitiesOf, hasCapability, isCapability, type Authenticator, type Identity } from "../auth/index.js";
import { authenticated, type AppState } from "./koa-middleware.js";
import { queryOne } from "./query.js";

type Schemas = components["schemas"];

/** The Identity answer of /v1/me and /me. */
export function identityBody(identity: Identity): Schemas["Identity"] {
  return { id: identity.id, scopes: [...identity.scopes], capabilities: capabilitiesOf(identity) };
}

export function addIdentityRoutes(router: Router<AppState>, auth: Authenticator): void {
  router.get("/v1/me", authenticated(auth, "read"), (ctx) => {
    ctx.body = identityBody(ctx.state.identity as Identity);
  });

  router.get("/v1/me/can", authenticated(auth), (ctx) => {
    const capability = queryOne(ctx, "capability");
    if (capability === undefined || capability === "") throw badRequest("query parameter capability is required (cache.read, cache.write or cache.admin)");
    if (!isCapability(capability)) {
      throw badRequest(`unknown capability ${JSON.stringify(capability)}; expected cache.read, cache.write or cache.admin`);
    }
    const out: Schemas["CapabilityAnswer"] = { capability, allowed: hasCapability(ctx.state.identity as Identity, capability) };
    ctx.body = out;
  });
}

/**
 * GET /me (management listener): /v1/me's answer for any authenticated identity. /v1/me needs
 * `read` (SPEC.md), so an admin-only identity could not learn its own scopes there.
 */
export function addAnyIdentityRoute(router: Router<AppState>, auth: Authenticator): void {
  router.get("/me", authenticated(auth), (ctx) => {
    ctx.body = identityBody(ctx.state.identity as Identity);
  });
}
