// The request handler of the dist listener: the gate (peer token or protected mode, before any
// body is read), the fixed paths of SPEC.md rewritten to their Connect form, then the peer
// Connect service over the node's PeerEndpoint under /internal/.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { LEASE_LIMITS, PEER_BODY_BYTES_MAX, PEER_TIMEOUT_MS } from "../core/limits.js";
import type { PeerEndpoint } from "../transport/index.js";
import { rewriteFixedPath, SERVICE_PATH } from "./fixed-paths.js";
import { peerGzip } from "./peer-compression.js";
import { correctParseErrors } from "./parse-errors.js";
import { browserRequestRefusal, peerRequestRefusal, refusePeerRequest, type PeerGateOptions } from "./peer-gate.js";
import { createBinaryExchangeRoutes, createPeerRoutes } from "./peer-service.js";
import { isBinaryStreamType, serverBytesFrames } from "./exchange-codec.js";
import { isPlainConnectStream, serveExchangeStream } from "./exchange-http2-handler.js";
import { exchangeHandler } from "./exchange-server.js";
import { installFastTextEncoding } from "./text-encoding.js";
import { writeJson } from "../http/respond.js";
import type { PeerConnectionTrust } from "./connection-trust.js";

/** Request handler of the dist listener (HTTP/1.1 and HTTP/2). */
export type PeerRequestHandler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** How the dist listener treats compressed bodies. */
export interface PeerBodyOptions {
  /** SERVICE_COMPRESSION_THRESHOLD > 0: gzip bodies are accepted (bounded, peer-compression.ts); else refused with 400. */
  readonly acceptCompressed: boolean;
}

const EXCHANGE_PATH = `${SERVICE_PATH}/Exchange`;

export function createPeerHandler(endpoint: PeerEndpoint, gate: PeerGateOptions, body: PeerBodyOptions = { acceptCompressed: false }, trust?: PeerConnectionTrust): PeerRequestHandler {
  installFastTextEncoding();
  const options = {
    // gzip only (peers never send brotli, Connect's other default), inflated within the cap
    acceptCompression: [peerGzip(body)],
    requestPathPrefix: "/internal",
    readMaxBytes: PEER_BODY_BYTES_MAX,
    writeMaxBytes: PEER_BODY_BYTES_MAX,
    // The longest call a peer may ask for: a Lease call may wait up to LEASE_LIMITS.waitMsMax
    // for the value on top of the peer timeout (every other call asks for the peer timeout).
    maxTimeoutMs: PEER_TIMEOUT_MS + LEASE_LIMITS.waitMsMax,
    jsonOptions: { ignoreUnknownFields: true, useProtoFieldName: true, alwaysEmitImplicit: true },
  };
  const connect = connectNodeAdapter({ ...options, routes: createPeerRoutes(endpoint) });
  // Binary Exchange streams (every node's own) go to the same method registered with Empty
  // frames, read by exchange-codec.ts; JSON ones stay typed.
  const binaryExchange = connectNodeAdapter({ ...options, routes: createBinaryExchangeRoutes(endpoint) });
  // The nodes' own streams (HTTP/2, Connect protobuf, no compression, no deadline) are read and
  // answered without Connect's pipeline (exchange-http2-handler.ts).
  const plainExchange = exchangeHandler(endpoint, serverBytesFrames());
  const dispatch: PeerRequestHandler = (req, res) => {
    const fromBrowser = browserRequestRefusal(req.headers);
    if (fromBrowser !== undefined) {
      refusePeerRequest(req, res, fromBrowser, true);
      return;
    }
    const refusal = peerRequestRefusal(gate, req.socket.remoteAddress, req.headers.authorization);
    if (refusal !== undefined) {
      refusePeerRequest(req, res, refusal);
      return;
    }
    trust?.markRequest(req);
    continueIfAsked(req, res);
    rewriteFixedPath(req);
    correctParseErrors(res);
    if (req.url !== EXCHANGE_PATH) connect(req, res);
    else if (isPlainConnectStream(req)) serveExchangeStream(req as Http2ServerRequest, res as Http2ServerResponse, plainExchange, PEER_BODY_BYTES_MAX);
    else if (isBinaryStreamType(req.headers["content-type"])) binaryExchange(req, res);
    else connect(req, res);
  };
  // Connect's adapter builds the request's URL synchronously and throws on an authority that is
  // not a host (`Host: [`) or on none at all (HTTP/1.0): thrown out of the request handler, that
  // stopped the node. Whatever throws here is the request's fault: 400.
  return (req, res) => {
    try {
      dispatch(req, res);
    } catch (err) {
      refuseMalformed(res, err);
    }
  };
}

/**
 * 100 Continue for a request that asked for it, sent once the gate let it through: the servers'
 * `checkContinue` listeners are this handler, so Node sends none itself (before, a caller without
 * the token was invited to send its body, over HTTP/1.1 and HTTP/2). None for a stream whose
 * reset came with its headers: writeContinue() throws on it, out of the request handler, and one
 * write by anyone stopped the node.
 */
function continueIfAsked(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0) return;
  if (!/(?:^|\W)100-continue(?:$|\W)/i.test(req.headers.expect ?? "")) return;
  if ("stream" in req && (req.stream.destroyed || req.stream.closed)) return;
  res.writeContinue();
}

/** 400 with the envelope for a request the dispatch could not take (or a reset when the answer has begun). */
function refuseMalformed(res: ServerResponse | Http2ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: `malformed peer request: ${err instanceof Error ? err.message : String(err)}`, code: "BAD_REQUEST" });
  // HTTP/1.1: the body was not read; HTTP/2 refuses connection headers (and needs none)
  writeJson(res as ServerResponse, 400, body, false, "stream" in res ? [] : ["Connection", "close"]);
}
