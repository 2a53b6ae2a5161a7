// The management listener's Koa app: health, statistics, configuration, metrics, cluster views
// and the control routes. Scopes: /health and the document are open; "read or better" (read or
// admin) on views and drain; admin on the routes that change data or membership.
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import Router from "@koa/router";
import Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import type { Clock } from "../core/clock.js";
import { CacheError, badRequest } from "../core/errors.js";
import { SSE_SUBSCRIBERS_MAX, VALUE_PREVIEW_BYTES_MAX } from "../core/limits.js";
import { isCounterValue } from "../core/counter-state.js";
import type { Config } from "../config/index.js";
import type { Authenticator } from "../auth/index.js";
import type { CacheService, DrainStatus, HintQueue, Lifecycle, Readiness, ReplicaInspector } from "../cluster/index.js";
import type { Logger } from "../log/index.js";
import type { MemberTable } from "../membership/index.js";
import type { ListenerDurations, Metrics, OperationLatencies, OtelMirror, SseHub } from "../observability/index.js";
import type { HashRing } from "../ring/index.js";
import { isLiveAt, type ShardedStore } from "../store/index.js";
import { SSE_RETRY_MS, subscribeEvents } from "./cluster-events.js";
import type { DashboardAssets } from "./dashboard-assets.js";
import { addDashboardRoutes } from "./dashboard-routes.js";
import { addAnyIdentityRoute, addIdentityRoutes } from "./identity-routes.js";
import { authenticated, errorEnvelope, quietAppErrors, requestDurations, sameSiteWrites, unknownRoute, type AppState } from "./koa-middleware.js";
import { membersBody } from "./members-body.js";
import { addRingRoute } from "./ring-route.js";
import { addHintsRoute } from "./hints-route.js";
import { answerHeld, browseKeys } from "./key-routes.js";
import { addReplicasRoute } from "./replicas-route.js";
import { addValuePreviewRoute, type ValueHead } from "./value-preview-route.js";

type Schemas = components["schemas"];

export interface ManagementAppDeps {
  readonly config: Config;
  readonly auth: Authenticator;
  readonly lifecycle: Lifecycle;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly openapiYaml: string;
  readonly store: ShardedStore;
  readonly members: MemberTable;
  readonly metrics: Metrics;
  readonly latencies: OperationLatencies;
  readonly otel: OtelMirror;
  readonly events: SseHub;
  /** Runs one eviction pass now; returns the evicted count. */
  readonly evictNow: () => number;
  /** Runs one expiration pass now; returns the expired count. */
  /** A whole expiration pass, in slices a turn apart; resolves with the items it expired. */
  readonly expireNow: () => Promise<number>;
  /** When the node started, monotonic ms. */
  readonly startedAtMonotonicMs: number;
  /** True while the node is still pulling its data from its peers. */
  readonly catchingUp: () => boolean;
  /** The checks of /readyz. */
  readonly readiness: Readiness;
  /** The drain hand-off status (GET /dist/drain). */
  readonly drainStatus: () => DrainStatus;
  /** http.server.request.duration of this listener. */
  readonly durations: ListenerDurations;
  /** This node's current ring (GET /cluster/ring). */
  readonly ring: () => HashRing;
  /** The replica hint queue and the queue of failed migrations (GET /dist/hints). */
  readonly hints: HintQueue;
  readonly migrations: HintQueue;
  /** The cluster cache: the key browser (GET /cluster/keys). */
  readonly cache: CacheService;
  /** The bytes held for clients, shared with the client listener (SERVICE_MAX_INFLIGHT_BYTES). */
  readonly inflight: ClientBytesBudget;
  /** Each owner's copy of a key (GET /cluster/keys/{key}/replicas). */
  readonly replicas: ReplicaInspector;
  /** The dashboard's built files (dist/dashboard); undefined when not built. */
  readonly dashboard?: DashboardAssets | undefined;
}

export function createManagementRouter(deps: ManagementAppDeps): Router<AppState> {
  const router = new Router<AppState>();
  addOpenRoutes(router, deps);
  addViewRoutes(router, deps);
  addClusterRoutes(router, deps);
  addControlRoutes(router, deps);
  addDashboardRoutes(router, { enabled: deps.config.dashboardEnabled, files: deps.dashboard });
  return router;
}

/** "read or better": read or admin. */
const readOrBetter = (auth: Authenticator) => authenticated(auth, "read", "admin");
const admin = (auth: Authenticator) => authenticated(auth, "admin");

/** Health, the probes, the OpenAPI document and who-am-I: no scope needed. */
function addOpenRoutes(router: Router<AppState>, deps: ManagementAppDeps): void {
  const { config } = deps;
  router.get("/livez", (ctx) => {
    const out: Schemas["Liveness"] = { status: "ok", node: config.nodeId };
    ctx.body = out;
  });
  router.get("/readyz", (ctx) => {
    const { ready, checks } = deps.readiness.status();
    const out: Schemas["Readiness"] = { status: ready ? "ready" : "not_ready", node: config.nodeId, checks };
    ctx.status = ready ? 200 : 503;
    ctx.body = out;
  });
  router.get("/health", (ctx) => {
    const draining = deps.lifecycle.draining;
    const out: Schemas["Health"] = { status: draining ? "draining" : "ok", node: config.nodeId, draining, catching_up: deps.catchingUp() };
    ctx.status = draining ? 503 : 200;
    ctx.body = out;
  });
  router.get("/v1/openapi.yaml", (ctx) => {
    ctx.type = "application/yaml";
    ctx.body = deps.openapiYaml;
  });
  addIdentityRoutes(router, deps.auth);
  addAnyIdentityRoute(router, deps.auth);
}

/** Statistics, configuration and metrics (read or better). */
function addViewRoutes(router: Router<AppState>, deps: ManagementAppDeps): void {
  const { auth, config, store } = deps;
  router.get("/stats", readOrBetter(auth), (ctx) => {
    const c = store.counters;
    const out: Schemas["Stats"] = {
      node: config.nodeId,
      items: store.items,
      bytes: store.bytes,
      capacity: store.capacity,
      data_bytes: store.dataBytes,
      max_data_bytes: store.maxDataBytes,
      hits: c.hits,
      misses: c.misses,
      sets: c.sets,
      deletes: c.deletes,
      evictions: c.evictions,
      expirations: c.expirations,
      uptime_s: Math.round(deps.clock.monotonicMs() - deps.startedAtMonotonicMs) / 1000,
      latency: { get: deps.latencies.get.summary(), set: deps.latencies.set.summary(), delete: deps.latencies.delete.summary() },
    };
    ctx.body = out;
  });

  router.get("/config", readOrBetter(auth), (ctx) => {
    const settings: Schemas["ConfigView"]["settings"] = {};
    for (const s of config.settings) settings[s.name] = { value: s.value, source: s.source };
    const out: Schemas["ConfigView"] = { node: config.nodeId, settings };
    ctx.body = out;
  });

  router.get("/dist/metrics", readOrBetter(auth), (ctx) => {
    const out: Schemas["DistMetrics"] = deps.metrics.snapshot();
    ctx.body = out;
  });

  router.get("/metrics", readOrBetter(auth), async (ctx) => {
    ctx.respond = false;
    // Awaited: the request's duration and status are recorded once the answer is written (a
    // failed scrape was recorded as 200, a review).
    await deps.otel.servePrometheus(ctx.req, ctx.res);
  });

}

/** Membership views, removal and the event stream. */
function addClusterRoutes(router: Router<AppState>, deps: ManagementAppDeps): void {
  const { auth, config, members } = deps;
  router.get("/cluster/members", readOrBetter(auth), (ctx) => {
    const out: Schemas["Members"] = membersBody(config, members);
    ctx.body = out;
  });

  addRingRoute(router, readOrBetter(auth), { config, ring: deps.ring, membershipVersion: () => members.version });

  // The client listener's key browser, same code path (see key-routes.ts).
  router.get("/cluster/keys", readOrBetter(auth), async (ctx) => {
    const out: Schemas["KeyBrowserPage"] = await browseKeys(ctx, deps.cache);
    answerHeld(ctx, deps.inflight, out);
  });

  addReplicasRoute(router, readOrBetter(auth), { nodeId: config.nodeId, maxKeyBytes: config.maxKeyBytes, inspector: deps.replicas });
  addValuePreviewRoute(router, readOrBetter(auth), { nodeId: config.nodeId, maxKeyBytes: config.maxKeyBytes, cache: deps.cache, localHead: localValueHead(deps) });

  router.delete("/cluster/members/:id", admin(auth), (ctx) => {
    const id = ctx.params.id as string;
    if (id === config.nodeId) throw badRequest("the local node cannot remove itself; drain and stop it instead");
    if (!members.remove(id)) throw new CacheError("NOT_FOUND", `no member ${JSON.stringify(id)}`);
    const out: Schemas["MemberRemoved"] = { id, removed: true };
    ctx.body = out;
  });

  router.get("/cluster/events", readOrBetter(auth), (ctx) => {
    if (ctx.method === "HEAD") {
      // The stream's headers only: a HEAD never subscribes.
      ctx.status = 200;
      ctx.type = "text/event-stream; charset=utf-8";
      ctx.set("Cache-Control", "no-cache");
      return;
    }
    if (deps.events.size >= SSE_SUBSCRIBERS_MAX) {
      ctx.set("Retry-After", String(Math.ceil(SSE_RETRY_MS / 1000)));
      throw new CacheError("UNAVAILABLE", `the event stream already has ${SSE_SUBSCRIBERS_MAX} subscribers; retry later`, { max_subscribers: SSE_SUBSCRIBERS_MAX });
    }
    ctx.respond = false;
    const expiresAtMs = ctx.state.identity?.expiresAtMs;
    subscribeEvents(
      ctx.req,
      ctx.res,
      deps.events,
      { members: () => JSON.stringify(membersBody(config, members)), heartbeat: () => JSON.stringify(deps.metrics.snapshot()) },
      expiresAtMs === undefined ? undefined : { atMs: expiresAtMs, nowMs: () => deps.clock.nowMs() },
    );
  });

}

/** Drain (read or better) and the admin passes over this node's data. */
function addControlRoutes(router: Router<AppState>, deps: ManagementAppDeps): void {
  const { auth, store } = deps;
  router.get("/dist/drain", readOrBetter(auth), (ctx) => {
    const out: Schemas["DrainStatus"] = deps.drainStatus();
    ctx.body = out;
  });

  addHintsRoute(router, readOrBetter(auth), deps);

  router.post("/dist/drain", readOrBetter(auth), (ctx) => {
    deps.lifecycle.drain("management request");
    const out: Schemas["DrainAnswer"] = { draining: true };
    ctx.body = out;
  });

  router.post("/evict", admin(auth), (ctx) => {
    const out: Schemas["EvictAnswer"] = { evicted: deps.evictNow() };
    ctx.body = out;
  });

  router.post("/clear", admin(auth), (ctx) => {
    const out: Schemas["ClearAnswer"] = { cleared: store.clear(), scope: "node" };
    ctx.body = out;
  });

  router.post("/trigger-expiration", admin(auth), async (ctx) => {
    const out: Schemas["ExpireAnswer"] = { expired: await deps.expireNow() };
    ctx.body = out;
  });
}

export function createManagementApp(deps: ManagementAppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  quietAppErrors(app, deps.logger);
  app.use(requestDurations(deps.durations, deps.clock));
  app.use(errorEnvelope(deps.logger, () => deps.auth.challenge));
  app.use(sameSiteWrites());
  app.use(createManagementRouter(deps).routes());
  app.use(unknownRoute());
  return app;
}

/**
 * The value preview's local read (value-preview-route.ts, localHead): with ONE reads, an owner's
 * live copy, its first bytes only. Counters (their value reads as decimal text) and everything
 * else go through the cluster read.
 */
function localValueHead(deps: ManagementAppDeps): ((key: string) => ValueHead | undefined) | undefined {
  const { config, store, clock } = deps;
  if (config.readConsistency !== "one") return undefined;
  return (key) => {
    if (!deps.ring().isOwner(key, config.nodeId)) return undefined;
    const h = store.peekHeader(key);
    if (h === undefined || !isLiveAt(h, clock.nowMs())) return undefined;
    const head = store.valueHead(key, VALUE_PREVIEW_BYTES_MAX);
    if (head === undefined || isCounterValue(head)) return undefined;
    return { bytes: h.valueBytes, head, version: h.version, expiresAtMs: h.expiresAtMs };
  };
}
