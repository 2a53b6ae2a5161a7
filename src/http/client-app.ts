// The client API listener's Koa app: the hot item routes first, then the router.
import Router from "@koa/router";
import Koa from "koa";
import type { components } from "../../gen/openapi/client.js";
import { yieldToEventLoop, type Clock, type YieldToLoop } from "../core/clock.js";
import type { Authenticator, RateLimiter } from "../auth/index.js";
import type { CacheService } from "../cluster/index.js";
import type { Logger } from "../log/index.js";
import type { MemberTable } from "../membership/index.js";
import type { ListenerDurations, OperationLatencies } from "../observability/index.js";
import { addBatchRoutes } from "./batch-routes.js";
import { addEndpointRoutes } from "./endpoint-routes.js";
import { addIdentityRoutes } from "./identity-routes.js";
import { ITEM_ROUTES, itemRoutes } from "./item-routes.js";
import { addKeyRoutes } from "./key-routes.js";
import { errorEnvelope, quietAppErrors, requestDurations, unknownRoute, type AppState } from "./koa-middleware.js";

/** The route template of the item routes. */
const ITEM_ROUTE = (ITEM_ROUTES[0] as { path: string }).path;

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
  /** The OpenAPI document served at /v1/openapi.yaml. */
  readonly openapiYaml: string;
  readonly limits: {
    readonly maxKeyBytes: number;
    readonly maxValueBytes: number;
    readonly maxBodyBytes: number;
    readonly maxBatchItems: number;
  };
}

/** The router of every client route except the hot item routes. */
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
    ctx.type = "application/yaml";
    ctx.body = deps.openapiYaml;
  });
  addIdentityRoutes(router, deps.auth);
  addBatchRoutes(router, { cache: deps.cache, auth: deps.auth, clock: deps.clock, yieldToLoop: deps.yieldToLoop ?? yieldToEventLoop, rateLimiter: deps.rateLimiter, ...deps.limits });
  addKeyRoutes(router, { cache: deps.cache, auth: deps.auth, maxKeyBytes: deps.limits.maxKeyBytes });
  addEndpointRoutes(router, { auth: deps.auth, members: deps.members });
  return router;
}

export function createClientApp(deps: ClientAppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  quietAppErrors(app, deps.logger);
  app.use(itemRoutes({ cache: deps.cache, auth: deps.auth, clock: deps.clock, logger: deps.logger, latencies: deps.latencies, durations: deps.durations.route(ITEM_ROUTE), ...deps.limits }));
  app.use(requestDurations(deps.durations, deps.clock));
  app.use(errorEnvelope(deps.logger, () => deps.auth.challenge));
  const router = createClientRouter(deps);
  app.use(router.routes());
  app.use(unknownRoute());
  return app;
}
