// Counter and expiry commands: incr and touch.
import type { Command } from "commander";
import { NotFoundError } from "@hypercache/client/node";
import { EXIT, KeyMissingError, UsageError } from "../exit-codes.js";
import type { Runner } from "../main.js";
import { consistency, etagArgument, keyArgument, terminalSafe } from "./data.js";

/** A decimal safe integer argument (no 0x, 1e3 or 0b forms), or a UsageError naming it. */
function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[+-]?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new UsageError(`${name}: expected a decimal integer within ±(2^53 − 1), got ${JSON.stringify(value)}`);
  return n;
}

/** The note of an answer that came from a replay after an attempt that may have reached a node. */
const REPLAYED_NOTE = "an earlier attempt's answer was lost; this answer came from its replay on another node";

/**
 * A touch's 404 NOT_FOUND of a missing key as a KeyMissingError (exit code 3); the 404 of an
 * unknown route (a wrong path prefix) stays what it is (exit code 1).
 */
function missingKey(err: unknown): unknown {
  if (!(err instanceof NotFoundError) || err.code !== "NOT_FOUND" || err.details?.route === "unknown") return err;
  return new KeyMissingError({ status: err.status, code: "NOT_FOUND", message: err.message, endpoint: err.endpoint });
}

export function registerUpdateCommands(program: Command, run: Runner): void {
  program
    .command("incr <key> [delta]")
    .description("add delta (default 1, may be negative) to the key's counter and print its new value")
    .option("--initial <n>", "where a counter this call starts begins (default 0)")
    .option("--ttl <duration>", "time to live of a counter this call starts, such as 30s or 1h")
    .option("--idempotency-key <key>", "retries with the same key add once (default: a fresh key per call)")
    .option("--if-match <etag>", "add only if the counter's ETag is this one; exit code 7 otherwise")
    .option("--consistency <level>", "one, quorum or all")
    .action(
      run<{ initial?: string; ttl?: string; idempotencyKey?: string; ifMatch?: string; consistency?: string }>(async ({ client, out, opts }, keyArg, delta) => {
        const key = keyArgument(keyArg);
        const r = await client.incr(key, {
          ...(delta !== undefined ? { delta: integer("delta", delta) } : {}),
          ...(opts.initial !== undefined ? { initial: integer("--initial", opts.initial) } : {}),
          ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}),
          ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
          ...(opts.ifMatch !== undefined ? { ifMatch: etagArgument("--if-match", opts.ifMatch) } : {}),
          consistency: consistency(opts.consistency),
        });
        const { appliedBy, replayed, ...rest } = r;
        out.result({ key, ...rest, applied_by: appliedBy, ...(replayed ? { replayed } : {}) }, () => String(r.value));
        // Under its Idempotency-Key the replay answers the first attempt's value: added once.
        if (replayed) out.note(`hypercache: ${REPLAYED_NOTE} (same Idempotency-Key: added once)`);
        return EXIT.OK;
      }),
    );

  program
    .command("touch <key>")
    .description("give a live item a new time to live (--ttl) or none (--persist), keeping its value (exit code 3 when it does not exist)")
    .option("--ttl <duration>", "the new time to live, such as 30s, 5m or 1h30m")
    .option("--persist", "remove the expiry")
    .option("--if-match <etag>", "touch only if the item's ETag is this one; exit code 7 otherwise")
    .option("--consistency <level>", "quorum or all")
    .action(
      run<{ ttl?: string; persist?: boolean; ifMatch?: string; consistency?: string }>(async ({ client, out, opts }, keyArg) => {
        const key = keyArgument(keyArg);
        if ((opts.ttl === undefined) === (opts.persist !== true)) throw new UsageError("touch needs exactly one of --ttl and --persist");
        const r = await client
          .touch(key, {
            ...(opts.ttl !== undefined ? { ttl: opts.ttl } : { persist: true as const }),
            ...(opts.ifMatch !== undefined ? { ifMatch: etagArgument("--if-match", opts.ifMatch) } : {}),
            consistency: consistency(opts.consistency),
          })
          .catch((err: unknown) => Promise.reject(missingKey(err)));
        const { expiresAt, ...rest } = r;
        out.result({ ...rest, ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}) }, () => `${out.color.green("touched")} ${terminalSafe(r.key)}: ${expiresAt !== undefined ? `expires at ${expiresAt}` : "never expires"}`);
        if (r.replayed) out.note(`hypercache: ${REPLAYED_NOTE}`);
        return EXIT.OK;
      }),
    );
}
