// The request handler of the dist listener: the peer Connect service over the node's
// PeerEndpoint, under /internal/, with the peer-token check on every call.
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { PEER_BODY_BYTES_MAX, PEER_TIMEOUT_MS } from "../core/limits.js";
import type { PeerEndpoint } from "../transport/index.js";
import { createPeerAuth } from "./peer-auth.js";
import { createPeerRoutes } from "./peer-service.js";

/** Request handler of the dist listener (Connect over HTTP/1.1 and HTTP/2). */
export type PeerRequestHandler = ReturnType<typeof connectNodeAdapter>;

export function createPeerHandler(endpoint: PeerEndpoint, peerToken: string | undefined): PeerRequestHandler {
  // The same token signs outgoing peer calls and is required on incoming ones; the construction
  // rule refuses a node that would sign without verifying ("insecure auth config").
  const peerAuth = createPeerAuth({ outboundToken: peerToken, inboundToken: peerToken });
  return connectNodeAdapter({
    routes: createPeerRoutes(endpoint),
    requestPathPrefix: "/internal",
    readMaxBytes: PEER_BODY_BYTES_MAX,
    writeMaxBytes: PEER_BODY_BYTES_MAX,
    maxTimeoutMs: PEER_TIMEOUT_MS,
    interceptors: [...peerAuth.inbound],
    jsonOptions: { ignoreUnknownFields: true, useProtoFieldName: true, alwaysEmitImplicit: true },
  });
}
