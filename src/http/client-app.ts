// The client API listener: the hot item routes (GET, HEAD, PUT, DELETE of a key, POST of its
// incr and touch) on the raw node:http request, then the Koa app (which serves them too, as its
// first middleware, when it is called directly) and its router.
import type { IncomingMessage, ServerResponse } from "node:http";
import Router from "@koa/router";
import Koa from "koa";
import type { components } from "../../gen/openapi/client.js";
import { yieldToEventLoop, type Clock, type YieldToLoop } from "../core/clock.js";
import type { Authenticator, RateLimiter } from "../auth/index.js";
import type { CacheService } from "../cluster/index.js";
import type { Logger } from "../log/index.js";
import type { MemberTable } from "../membership/index.js";
import type { ListenerDurations, OperationLatencies } from "../observability/index.js";
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import { addBatchRoutes } from "./batch-routes.js";
import { addEndpointRoutes } from "./endpoint-routes.js";
import { addIdentityRoutes } from "./identity-routes.js";
import { createItemHandler, itemRoutes, type ItemHandler, type ItemRouteDeps } from "./item-routes.js";
import { addKeyRoutes } from "./key-routes.js";
import { addLeaseRoutes } from "./lease-routes.js";
import { errorEnvelope, quietAppErrors, requestDurations, sameSiteWrites, unknownRoute, type AppState } from "./koa-middleware.js";


type Schemas = components["schemas"];

export interface ClientAppDeps {
  readonly cache: CacheService;
  readonly auth: Authenticator;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly latencies: OperationLatencies;
  /** http.server.request.duration of this listener. */
  readonly durations: ListenerDurations;
  /** The rate limiter behind `auth` (batches pay the rest of their cost once read). */
  readonly rateLimiter?: Pick<RateLimiter, "chargeMore">;
  /** Membership, for endpoint discovery (GET /v1/cluster/endpoints). */
  readonly members: MemberTable;
  /** Lets queued I/O run between the chunks of long answers; setImmediate when omitted. */
  readonly yieldToLoop?: YieldToLoop;
  /** Bytes of large bodies and answers under way on this listener (SERVICE_MAX_INFLIGHT_BYTES). */
  readonly inflight: ClientBytesBudget;
  /** The OpenAPI document served at /v1/openapi.yaml. */
  readonly openapiYaml: string;
  readonly limits: {
    readonly maxKeyBytes: number;
    readonly maxValueBytes: number;
    readonly maxBodyBytes: number;
    readonly maxBatchItems: number;
  };
}

/** The router of every client route except the hot item routes (item-routes.ts). */
export function createClientRouter(deps: ClientAppDeps): Router<AppState> {
  const router = new Router<AppState>();
  const liveness = (): Schemas["Liveness"] => ({ status: "ok", node: deps.cache.nodeId });
  router.get("/healthz", (ctx) => {
    ctx.body = liveness();
  });
  router.get("/health", (ctx) => {
    ctx.body = liveness();
  });
  router.get("/v1/openapi.yaml", (ctx) => {
    deps.inflight.holdAnswer(ctx.res, deps.openapiYaml.length);
    ctx.type = "application/yaml";
    ctx.body = deps.openapiYaml;
  });
  addIdentityRoutes(router, deps.auth);
  addBatchRoutes(router, { cache: deps.cache, auth: deps.auth, clock: deps.clock, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop, rateLimiter: deps.rateLimiter, inflight: deps.inflight, ...deps.limits });
  addKeyRoutes(router, { cache: deps.cache, auth: deps.auth, maxKeyBytes: deps.limits.maxKeyBytes, inflight: deps.inflight });
  addLeaseRoutes(router, { cache: deps.cache, auth: deps.auth, maxKeyBytes: deps.limits.maxKeyBytes });
  addEndpointRoutes(router, { auth: deps.auth, members: deps.members });
  return router;
}

export function createClientApp(deps: ClientAppDeps, items: ItemHandler = createItemHandler(itemDeps(deps))): Koa<AppState> {
  const app = new Koa<AppState>();
  quietAppErrors(app, deps.logger);
  app.use(itemRoutes(items));
  app.use(requestDurations(deps.durations, deps.clock));
  app.use(errorEnvelope(deps.logger, () => deps.auth.challenge));
  app.use(sameSiteWrites());
  const router = createClientRouter(deps);
  app.use(router.routes());
  app.use(unknownRoute());
  return app;
}

/** The client listener: its Koa app, and the request handler that serves it. */
export interface ClientListener {
  readonly app: Koa<AppState>;
  /**
   * The listener's request handler: the item routes on the raw node:http request, everything
   * else through the Koa app.
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

export function createClientListener(deps: ClientAppDeps): ClientListener {
  const items = createItemHandler(itemDeps(deps));
  const app = createClientApp(deps, items);
  const koa = app.callback();
  return {
    app,
    handler: (req, res) => {
      if (!items.serve(req, res)) void koa(req, res);
    },
  };
}

function itemDeps(deps: ClientAppDeps): ItemRouteDeps {
  return { cache: deps.cache, auth: deps.auth, clock: deps.clock, logger: deps.logger, latencies: deps.latencies, durations: deps.durations, yieldToLoop: deps.yieldToLoop, inflight: deps.inflight, ...deps.limits };
}
