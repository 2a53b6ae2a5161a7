// The servers every part compares, as sides of a measurement. Pinned sides run the server on
// core 0 and the load generator on core 1, so neither takes CPU from the other.
import { randomBytes } from "node:crypto";
import type { Side } from "../measure.js";
import type { Placement } from "../proc.js";
import { startCeiling, startNodes } from "../servers.js";

export const SERVER_CORE: Placement = { core: 0 };
export const GENERATOR_CORE: Placement = { core: 1 };

/** bench/baseline-server.mjs, answering as node `bench-1` like the node it is compared with. */
export const ceiling: Side = { name: "ceiling", start: () => startCeiling(SERVER_CORE, "bench-1"), generator: GENERATOR_CORE };

/** One hypercache-server node with its defaults (open client API). */
export const node: Side = { name: "node", start: () => startNodes(1, [SERVER_CORE], {}), generator: GENERATOR_CORE };

/** One node with a shared bearer token (SERVICE_AUTH_TOKEN); every request carries it. */
export function nodeWithToken(): Side {
  const token = randomBytes(24).toString("base64url");
  return { name: "node+bearer", start: () => startNodes(1, [SERVER_CORE], { SERVICE_AUTH_TOKEN: token }, token), generator: GENERATOR_CORE, token };
}

/** One node with rate limits on (SERVICE_RATE_LIMIT) at a rate the load never reaches. */
export const nodeWithLimits: Side = { name: "node+limits", start: () => startNodes(1, [SERVER_CORE], { SERVICE_RATE_LIMIT: "1000000000" }), generator: GENERATOR_CORE };

/**
 * The same node from another build (BENCH_BASE_BIN: the dist/src/main.js of, say, the commit
 * before the operator metrics), to measure what a change costs within one run.
 */
export function baseNode(bin: string): Side {
  return { name: "node@base", start: () => startNodes(1, [SERVER_CORE], {}, undefined, bin), generator: GENERATOR_CORE };
}
