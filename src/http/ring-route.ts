// GET /cluster/ring: each node's share of the hash space in this node's ring. The shares are
// computed once per ring (RingFollower replaces the ring object only when ownership moves), so
// polling the route does no work while the cluster is stable.
import type Router from "@koa/router";
import type Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import { VIRTUAL_NODES } from "../core/limits.js";
import { ringShares, type HashRing, type NodeShare } from "../ring/index.js";
import type { AppState } from "./koa-middleware.js";

type Schemas = components["schemas"];

export interface RingRouteDeps {
  readonly config: { readonly nodeId: string; readonly replication: number };
  /** This node's current ring. */
  readonly ring: () => HashRing;
  /** The membership version of this node's view. */
  readonly membershipVersion: () => number;
}

export function addRingRoute(router: Router<AppState>, guard: Koa.Middleware<AppState>, deps: RingRouteDeps): void {
  let cached: { ring: HashRing; shares: NodeShare[] } | undefined;
  const sharesOf = (ring: HashRing): NodeShare[] => {
    if (cached?.ring !== ring) cached = { ring, shares: ringShares(ring) };
    return cached.shares;
  };
  router.get("/cluster/ring", guard, (ctx) => {
    const out: Schemas["Ring"] = {
      node: deps.config.nodeId,
      membership_version: deps.membershipVersion(),
      replication: deps.config.replication,
      virtual_nodes: VIRTUAL_NODES,
      nodes: sharesOf(deps.ring()).map((s) => ({ id: s.id, primary_share: s.primaryShare, owner_share: s.ownerShare })),
    };
    ctx.body = out;
  });
}
