// GET /v1/cluster/endpoints: endpoint discovery for clients. Every member that is not dead, with
// the client and management base URLs it advertises (gossiped); never the peer addresses.
import type Router from "@koa/router";
import type { components } from "../../gen/openapi/client.js";
import type { Authenticator } from "../auth/index.js";
import type { MemberTable } from "../membership/index.js";
import { authenticated, type AppState } from "./koa-middleware.js";

type Schemas = components["schemas"];

/** The discovery answer: members alive or suspect whose URLs are known, sorted by id. */
export function clusterEndpoints(members: MemberTable): Schemas["ClusterEndpoints"] {
  const endpoints: Schemas["ClusterEndpoint"][] = [];
  for (const m of members.list()) {
    if (m.state === "dead" || !m.apiUrl || !m.mgmtUrl) continue;
    endpoints.push({ node: m.id, api_url: m.apiUrl, mgmt_url: m.mgmtUrl, state: m.state });
  }
  return { membership_version: members.version, endpoints };
}

export function addEndpointRoutes(router: Router<AppState>, deps: { readonly auth: Authenticator; readonly members: MemberTable }): void {
  router.get("/v1/cluster/endpoints", authenticated(deps.auth, "read"), (ctx) => {
    ctx.body = clusterEndpoints(deps.members);
  });
}
