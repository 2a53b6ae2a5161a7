// The management listener's Koa app: health, identity and the operator routes.
import Router from "@koa/router";
import Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import type { Authenticator } from "../auth/index.js";
import type { Lifecycle } from "../dist/index.js";
import type { Logger } from "../log/index.js";
import { addIdentityRoutes } from "./identity-routes.js";
import { errorEnvelope, quietAppErrors, unknownRoute, type AppState } from "./koa-middleware.js";

type Schemas = components["schemas"];

export interface ManagementAppDeps {
  readonly nodeId: string;
  readonly auth: Authenticator;
  readonly lifecycle: Lifecycle;
  readonly logger: Logger;
  readonly openapiYaml: string;
}

export function createManagementRouter(deps: ManagementAppDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get("/health", (ctx) => {
    const draining = deps.lifecycle.draining;
    const out: Schemas["Health"] = { status: draining ? "draining" : "ok", node: deps.nodeId, draining };
    ctx.status = draining ? 503 : 200;
    ctx.body = out;
  });
  router.get("/v1/openapi.yaml", (ctx) => {
    ctx.type = "application/yaml";
    ctx.body = deps.openapiYaml;
  });
  addIdentityRoutes(router, deps.auth);
  return router;
}

export function createManagementApp(deps: ManagementAppDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  quietAppErrors(app, deps.logger);
  app.use(errorEnvelope(deps.logger, () => deps.auth.challenge));
  app.use(createManagementRouter(deps).routes());
  app.use(unknownRoute());
  return app;
}
