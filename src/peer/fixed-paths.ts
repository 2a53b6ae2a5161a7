// The peer paths SPEC.md names, served by the same Connect implementation: the request is
// rewritten to the canonical method path before the Connect handler sees it. POST paths take a
// JSON body (the content type is forced to JSON); GET paths become Connect's GET form, which
// the NO_SIDE_EFFECTS methods accept.
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import { REFLECTION_PATHS } from "./reflection.js";

export const SERVICE_PATH = "/internal/hypercache.peer.v1.PeerService";
const BARE_SERVICE_PATH = "/hypercache.peer.v1.PeerService/";

const POST_PATHS: Readonly<Record<string, string>> = Object.freeze({
  "/internal/set": "Set",
  "/internal/remove": "Remove",
  "/internal/forward": "Forward",
  "/internal/gossip": "Gossip",
  "/dist/drain": "Drain",
});

/** GET paths and how their query maps onto the request message. */
const GET_PATHS: Readonly<Record<string, { method: string; message: (q: URLSearchParams) => Record<string, unknown> }>> = Object.freeze({
  "/health": { method: "Health", message: () => ({ unavailable_when_draining: true }) },
  "/internal/keys": {
    method: "Keys",
    message: (q) => ({ cursor: q.get("cursor") ?? "", limit: q.get("limit") ?? 0, q: q.get("q") ?? "" }),
  },
  "/internal/probe": { method: "Probe", message: (q) => ({ target: q.get("target") ?? "" }) },
  "/internal/get": { method: "Get", message: (q) => ({ keys: q.getAll("key") }) },
});

/** True for a request that carries no body (HTTP/1.1 framing, or an HTTP/2 stream ended with its headers). */
function hasNoBody(req: IncomingMessage | Http2ServerRequest): boolean {
  if ("stream" in req) return req.stream.endAfterHeaders;
  const length = req.headers["content-length"];
  return length === "0" || (length === undefined && req.headers["transfer-encoding"] === undefined);
}

/**
 * Rewrites a fixed-path request in place to its canonical Connect form. Returns false when the
 * path is not one of the fixed paths (the request is left untouched).
 */
export function rewriteFixedPath(req: IncomingMessage | Http2ServerRequest): boolean {
  const url = req.url ?? "";
  // Standard gRPC clients call /<package>.<Service>/<Method> and cannot add a prefix.
  if (url.startsWith(BARE_SERVICE_PATH) || REFLECTION_PATHS.some((p) => url.startsWith(p))) {
    req.url = `/internal${url}`;
    return true;
  }
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  const method = req.method ?? "";
  const post = POST_PATHS[path];
  if (post !== undefined && method === "POST") {
    req.url = `${SERVICE_PATH}/${post}`;
    req.headers["content-type"] = "application/json";
    // `curl -X POST .../dist/drain` sends no body: read it as the empty message `{}`. Connect
    // reads a request body by iterating the request, so a bodiless request yields "{}" instead.
    if (hasNoBody(req)) {
      req.headers["content-length"] = "2";
      Object.defineProperty(req, Symbol.asyncIterator, {
        value: async function* () {
          yield Buffer.from("{}");
        },
      });
    }
    return true;
  }
  const get = GET_PATHS[path];
  if (get !== undefined && method === "GET") {
    const message = get.message(new URLSearchParams(q < 0 ? "" : url.slice(q + 1)));
    const limit = message.limit;
    if (typeof limit === "string" && /^\d+$/.test(limit)) message.limit = Number(limit);
    req.url = `${SERVICE_PATH}/${get.method}?connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify(message))}`;
    return true;
  }
  return false;
}
