// GET /cluster/keys/{key}/value: the first VALUE_PREVIEW_BYTES_MAX bytes of a key's value, read
// through the cluster like a client read, for the dashboard's text or hex preview (the page may
// only call the management listener it came from). A read gives the whole value, so previews run
// one per event-loop turn and copy only the bytes they answer: 200 previews of an 8 MiB value,
// each copied whole once more, all in one turn, held /healthz 1.4 s (a review). At most
// VALUE_PREVIEW_QUEUE_MAX wait; past that a preview is 503 with Retry-After: 1.
import type Router from "@koa/router";
import type Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import { yieldToEventLoop } from "../core/clock.js";
import { CacheError } from "../core/errors.js";
import { VALUE_PREVIEW_BYTES_MAX, VALUE_PREVIEW_QUEUE_MAX } from "../core/limits.js";
import type { CacheService } from "../cluster/index.js";
import type { AppState } from "./koa-middleware.js";
import { keyInPath } from "./validate.js";
import { quotedKey } from "../core/key-check.js";

type Schemas = components["schemas"];

const PREFIX = "/cluster/keys/";
const SUFFIX = "/value";

/** The first bytes of a live value this node holds, with what the answer says of it. */
export interface ValueHead {
  readonly bytes: number;
  readonly head: string;
  readonly version: number;
  readonly expiresAtMs: number;
}

export interface ValuePreviewDeps {
  readonly nodeId: string;
  readonly maxKeyBytes: number;
  readonly cache: CacheService;
  /**
   * The first VALUE_PREVIEW_BYTES_MAX bytes of `key`'s value when a client read would take this
   * node's copy (it owns the key, reads are ONE) and it holds it live; else undefined, and the
   * preview reads through the cluster.
   */
  readonly localHead?: (key: string) => ValueHead | undefined;
}

/** Runs one task per event-loop turn, in arrival order; at most `queueMax` wait (else 503). */
class OnePerTurn {
  private running = false;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly queueMax: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running) {
      if (this.waiting.length >= this.queueMax) {
        throw new CacheError("UNAVAILABLE", `${this.waiting.length} value previews are waiting already; retry in a moment`, { waiting: this.waiting.length }, { retryAfterS: 1 });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running = true;
    try {
      return await task();
    } finally {
      // The next one starts in a later turn, after what is waiting for the loop.
      const next = this.waiting.shift();
      if (next === undefined) this.running = false;
      else void yieldToEventLoop().then(next);
    }
  }
}

export function addValuePreviewRoute(router: Router<AppState>, guard: Koa.Middleware<AppState>, deps: ValuePreviewDeps): void {
  const turns = new OnePerTurn(VALUE_PREVIEW_QUEUE_MAX);
  router.get("/cluster/keys/:key/value", guard, async (ctx) => {
    const { nodeId, maxKeyBytes, cache } = deps;
    const key = keyInPath(ctx.path, PREFIX, SUFFIX, maxKeyBytes);
    const found = deps.localHead?.(key) ?? (await turns.run(() => headThroughCluster(cache, key)));
    if (found === undefined) throw new CacheError("NOT_FOUND", `no live value for key ${quotedKey(key)}`);
    const out: Schemas["ValuePreview"] = {
      key,
      node: nodeId,
      bytes: found.bytes,
      preview_base64: Buffer.from(found.head, "latin1").toString("base64"),
      truncated: found.bytes > VALUE_PREVIEW_BYTES_MAX,
      expires_at: found.expiresAtMs === 0 ? null : new Date(found.expiresAtMs).toISOString(),
      version: found.version,
    };
    ctx.body = out;
  });
}

/** A client read's value, cut to the preview (values are byte strings: only its bytes are copied). */
async function headThroughCluster(cache: CacheService, key: string): Promise<ValueHead | undefined> {
  const { item } = await cache.read(key);
  return item === undefined ? undefined : { bytes: item.value.length, head: item.value.slice(0, VALUE_PREVIEW_BYTES_MAX), version: item.version, expiresAtMs: item.expiresAtMs };
}
