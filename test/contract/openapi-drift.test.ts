// Route drift: the routes the Koa apps serve against the (method, path) pairs of openapi/*.yaml.
// The apps are built from code, no process is started. The client app is checked both ways;
// the management app, still incomplete, only one way until the management routes land.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { parse as parseYaml } from "yaml";
import { openAuthenticator } from "../../src/auth/index.js";
import { Lifecycle, type CacheService } from "../../src/cluster/index.js";
import { createClientRouter } from "../../src/http/client-app.js";
import { ITEM_ROUTES } from "../../src/http/item-routes.js";
import { createManagementRouter } from "../../src/http/management-app.js";
import { recordingLogger } from "../../src/log/index.js";
import { Metrics } from "../../src/observability/index.js";
import { testConfig } from "../helpers/test-config.js";

const OPERATIONS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** "METHOD /path" for every operation of an OpenAPI document. */
function documentedRoutes(file: string): string[] {
  const text = readFileSync(new URL(`../../openapi/${file}`, import.meta.url), "utf8");
  const doc = parseYaml(text) as { paths?: Record<string, Record<string, unknown>> };
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of Object.keys(item)) {
      if (OPERATIONS.includes(method)) out.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return out.sort();
}

/**
 * "METHOD /path" for every layer of a @koa/router instance, with `:param` written `{param}`.
 * @koa/router adds HEAD to every GET layer by itself: that HEAD is not a route of its own.
 */
function routerRoutes(router: { stack: ReadonlyArray<{ path: string | RegExp; methods: string[] }> }): string[] {
  const out: string[] = [];
  for (const layer of router.stack) {
    if (typeof layer.path !== "string") throw new Error(`a RegExp route cannot be checked against OpenAPI: ${String(layer.path)}`);
    const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    for (const method of layer.methods) {
      if (method === "HEAD" && layer.methods.includes("GET")) continue;
      out.push(`${method} ${path}`);
    }
  }
  return out;
}

/**
 * Deps for building a router: only the fields given. A router reads its deps when a request
 * arrives, not while it is built, so the drift test does not track every dependency the apps grow.
 */
function routerDeps<T>(given: Partial<T>): T {
  return given as T;
}

const unused = (): never => {
  throw new Error("building the router never calls the cache");
};

const fakeCache: CacheService = {
  nodeId: "drift-node",
  owners: unused,
  get: unused,
  read: unused,
  localValueBytes: unused,
  getMany: unused,
  lease: unused,
  releaseLease: unused,
  admitWrite: unused,
  listKeys: unused,
};

function clientRouterRoutes(): string[] {
  const router = createClientRouter(routerDeps<Parameters<typeof createClientRouter>[0]>({
    cache: fakeCache,
    auth: openAuthenticator(),
    clock: { nowMs: () => 0, monotonicMs: () => 0 },
    logger: recordingLogger(),
    openapiYaml: "",
    limits: { maxKeyBytes: 4096, maxValueBytes: 8 * 1024 * 1024, maxBodyBytes: 16 * 1024 * 1024, maxBatchItems: 1000 },
  }));
  return routerRoutes(router);
}

const itemRoutes = (): string[] => ITEM_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`);

/** The client app: the hot item routes (first middleware) plus the router. */
function clientAppRoutes(): string[] {
  return [...new Set([...clientRouterRoutes(), ...itemRoutes()])].sort();
}

function managementAppRoutes(): string[] {
  const logger = recordingLogger();
  const router = createManagementRouter(routerDeps<Parameters<typeof createManagementRouter>[0]>({
    config: testConfig(),
    auth: openAuthenticator(),
    lifecycle: new Lifecycle({ nodeId: "n1", metrics: new Metrics(), logger, nowMs: () => 0 }),
    logger,
    openapiYaml: "",
  }));
  return [...new Set(routerRoutes(router))].sort();
}

const missingFrom = (have: readonly string[], want: readonly string[]) => want.filter((r) => !have.includes(r));

describe("OpenAPI route drift", () => {
  describe("client listener vs openapi/client.yaml", () => {
    const app = clientAppRoutes();
    const doc = documentedRoutes("client.yaml");

    it("reads real routes from both sides: the router, the hot item routes and the document", () => {
      expect(app).to.include.members(["GET /healthz", "POST /v1/cache/batch/put", "GET /v1/owners/{key}", "PUT /v1/cache/{key}", "HEAD /v1/cache/{key}"]);
      expect(doc).to.include.members(["GET /healthz", "PUT /v1/cache/{key}", "GET /v1/cache/keys"]);
    });

    it("every route the client app serves is documented in openapi/client.yaml", () => {
      expect(missingFrom(doc, app), "served but not documented").to.deep.equal([]);
    });

    it("every route openapi/client.yaml documents is served by the client app", () => {
      expect(missingFrom(app, doc), "documented but not served").to.deep.equal([]);
    });

    it("the router does not also register a hot item route (the item middleware would shadow it)", () => {
      const router = clientRouterRoutes();
      expect(itemRoutes().filter((r) => router.includes(r))).to.deep.equal([]);
    });
  });

  describe("management listener vs openapi/management.yaml", () => {
    const app = managementAppRoutes();
    const doc = documentedRoutes("management.yaml");

    it("reads real routes from both sides: the management router and the document", () => {
      expect(app).to.include.members(["GET /health", "GET /v1/me"]);
      expect(doc).to.include.members(["GET /health", "GET /stats", "POST /dist/drain", "DELETE /cluster/members/{id}"]);
    });

    it("every route the management app serves is documented in openapi/management.yaml", () => {
      expect(missingFrom(doc, app), "served but not documented").to.deep.equal([]);
    });

    it("every route openapi/management.yaml documents is served by the management app", () => {
      expect(missingFrom(app, doc), "documented but not served").to.deep.equal([]);
    });
  });
});
