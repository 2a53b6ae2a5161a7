// GET /dist/hints: what this node's hint queues hold for each peer, with totals, caps and the
// hint counters since start.
import type Router from "@koa/router";
import type Koa from "koa";
import type { components } from "../../gen/openapi/management.js";
import type { Clock } from "../core/clock.js";
import { HINTED_METRICS, summarizeHints, type HintQueue } from "../cluster/index.js";
import type { Metrics } from "../observability/index.js";
import type { AppState } from "./koa-middleware.js";

type Schemas = components["schemas"];

export interface HintsRouteDeps {
  readonly config: { readonly nodeId: string; readonly hintMaxPerNode: number; readonly hintMaxBytes: number; readonly hintTtlMs: number };
  readonly hints: HintQueue;
  readonly migrations: HintQueue;
  readonly metrics: Metrics;
  readonly clock: Clock;
}

function queueView(queue: HintQueue, nowMs: number): Schemas["HintQueueView"] {
  const o = summarizeHints(queue.summary(), nowMs);
  return {
    targets: o.targets.map((t) => ({ node: t.node, count: t.count, bytes: t.bytes, oldest_age_ms: t.oldestAgeMs, replay_failing: t.replayFailing })),
    total_count: o.totalCount,
    total_bytes: o.totalBytes,
    oldest_age_ms: o.oldestAgeMs,
  };
}

export function addHintsRoute(router: Router<AppState>, guard: Koa.Middleware<AppState>, deps: HintsRouteDeps): void {
  router.get("/dist/hints", guard, (ctx) => {
    const { config, hints, migrations, metrics, clock } = deps;
    const now = clock.nowMs();
    const out: Schemas["Hints"] = {
      node: config.nodeId,
      ...queueView(hints, now),
      caps: { max_per_node: config.hintMaxPerNode, max_bytes: config.hintMaxBytes, ttl_ms: config.hintTtlMs },
      counters: {
        queued: metrics.get(HINTED_METRICS.queued),
        replayed: metrics.get(HINTED_METRICS.replayed),
        expired: metrics.get(HINTED_METRICS.expired),
        dropped_per_node_cap: metrics.get(HINTED_METRICS.dropped),
        dropped_bytes_cap: metrics.get(HINTED_METRICS.globalDropped),
      },
      migrations: queueView(migrations, now),
    };
    ctx.body = out;
  });
}
