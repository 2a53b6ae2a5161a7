// GET /cluster/keys/{key}/replicas: each owner's local copy of one key (ReplicaInspector), or
// why it could not be read.
import type Router from "@koa/router";
import type Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import type { ReplicaCopy, ReplicaInspector } from "../cluster/index.js";
import type { AppState } from "./koa-middleware.js";
import { keyInPath } from "./validate.js";

type Schemas = components["schemas"];

const PREFIX = "/cluster/keys/";
const SUFFIX = "/replicas";

export interface ReplicasRouteDeps {
  readonly nodeId: string;
  readonly maxKeyBytes: number;
  readonly inspector: ReplicaInspector;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** One owner's copy in the answer's shape: fields that do not apply are null. */
function replicaBody(c: ReplicaCopy): Schemas["ReplicaCopy"] {
  const none = { version: null, origin: null, expires_at: null, last_updated: null, bytes: null, error: null };
  if (!c.reachable) return { node: c.node, role: c.role, state: "unreachable", present: false, ...none, error: c.error };
  const m = c.meta;
  if (m.state === "absent") return { node: c.node, role: c.role, state: "absent", present: false, ...none };
  const held = { ...none, version: m.version, origin: m.origin, last_updated: iso(m.lastUpdatedMs) };
  if (m.state === "tombstone") return { node: c.node, role: c.role, state: "tombstone", present: false, ...held };
  return { node: c.node, role: c.role, state: "live", present: true, ...held, expires_at: m.expiresAtMs === 0 ? null : iso(m.expiresAtMs), bytes: m.valueBytes };
}

export function addReplicasRoute(router: Router<AppState>, guard: Koa.Middleware<AppState>, deps: ReplicasRouteDeps): void {
  router.get("/cluster/keys/:key/replicas", guard, async (ctx) => {
    const { nodeId, maxKeyBytes, inspector } = deps;
    const key = keyInPath(ctx.path, PREFIX, SUFFIX, maxKeyBytes);
    const report = await inspector.inspect(key);
    const out: Schemas["KeyReplicas"] = {
      key,
      node: nodeId,
      owners: [...report.owners],
      timeout_ms: inspector.timeoutMs,
      divergent: report.divergent,
      replicas: report.copies.map(replicaBody),
    };
    ctx.body = out;
  });
}
