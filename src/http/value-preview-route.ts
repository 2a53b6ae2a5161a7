// GET /cluster/keys/{key}/value: the first VALUE_PREVIEW_BYTES_MAX bytes of a key's value, read
// through the cluster like a client read, for the dashboard's text or hex preview (the page may
// only call the management listener it came from).
import type Router from "@koa/router";
import type Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import { toBuffer } from "../core/byte-string.js";
import { CacheError } from "../core/errors.js";
import { VALUE_PREVIEW_BYTES_MAX } from "../core/limits.js";
import type { CacheService } from "../cluster/index.js";
import type { AppState } from "./koa-middleware.js";
import { keyInPath } from "./validate.js";
import { quotedKey } from "../core/key-check.js";

type Schemas = components["schemas"];

const PREFIX = "/cluster/keys/";
const SUFFIX = "/value";

export interface ValuePreviewDeps {
  readonly nodeId: string;
  readonly maxKeyBytes: number;
  readonly cache: CacheService;
}

export function addValuePreviewRoute(router: Router<AppState>, guard: Koa.Middleware<AppState>, deps: ValuePreviewDeps): void {
  router.get("/cluster/keys/:key/value", guard, async (ctx) => {
    const { nodeId, maxKeyBytes, cache } = deps;
    const key = keyInPath(ctx.path, PREFIX, SUFFIX, maxKeyBytes);
    const { item } = await cache.read(key);
    if (item === undefined) throw new CacheError("NOT_FOUND", `no live value for key ${quotedKey(key)}`);
    const value = toBuffer(item.value);
    const out: Schemas["ValuePreview"] = {
      key,
      node: nodeId,
      bytes: value.length,
      preview_base64: value.subarray(0, VALUE_PREVIEW_BYTES_MAX).toString("base64"),
      truncated: value.length > VALUE_PREVIEW_BYTES_MAX,
      expires_at: item.expiresAtMs === 0 ? null : new Date(item.expiresAtMs).toISOString(),
      version: item.version,
    };
    ctx.body = out;
  });
}
