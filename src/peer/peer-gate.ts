// The door of the dist listener: every request is checked before anything of its body is read,
// buffered, inflated or decoded. With a peer token, the request must carry it. With no peer
// credential at all (no token, no peer mutual TLS) the listener is in protected mode: only
// loopback callers are served, unless SERVICE_PEER_INSECURE opens it (SPEC-NOTES).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { CROSS_SITE_REASON } from "../http/cross-site.js";
import { writeJson } from "../http/respond.js";
import { declaresBody, discardRest } from "../http/unread-body.js";
import { bearerToken, secretsEqual } from "./peer-auth.js";

export interface PeerGateOptions {
  /** The peer token every call must carry, when configured. */
  readonly token: string | undefined;
  /** Peer mutual TLS is on: the handshake already verified the caller's certificate. */
  readonly mutualTls: boolean;
  /** SERVICE_PEER_INSECURE: serve callers from any address without a credential. */
  readonly insecure: boolean;
}

/** Why a peer request is refused (401), or undefined when it may go on. Pure. */
export function peerRequestRefusal(opts: PeerGateOptions, remoteAddress: string | undefined, authorization: string | undefined): string | undefined {
  if (opts.token !== undefined && opts.token !== "") {
    const given = bearerToken(authorization);
    return given !== undefined && secretsEqual(given, opts.token) ? undefined : "missing or wrong peer token";
  }
  if (opts.mutualTls || opts.insecure || isLoopback(remoteAddress)) return undefined;
  return (
    `protected mode: no peer credential is configured (SERVICE_PEER_TOKEN or peer mutual TLS), so the peer port serves loopback callers only, ` +
    `not ${remoteAddress ?? "an unknown address"}; configure a peer token on every node, or set SERVICE_PEER_INSECURE=true`
  );
}

/** True for 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.startsWith("::ffff:") ? address.slice(7) : address;
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

/**
 * Answers a refused request in the form its protocol reads, without touching its body: gRPC and
 * gRPC-Web get status 16 UNAUTHENTICATED in the headers (trailers-only); everything else (Connect,
 * the fixed paths) gets 401 with the JSON envelope. An HTTP/1.1 request that has a body closes
 * its connection after the answer, so the body is never read.
 */
/**
 * Bytes of a refused gRPC call's body over HTTP/1.1 read and dropped before its connection is
 * cut: a client still writing a small body reads its Unauthenticated (closing at once made a
 * gRPC-Web client see a reset, INTERNAL), and a large one is not read to its end (Node read a
 * refused call's whole body: 3.7 GB in 5 s).
 */
const REFUSED_GRPC_BODY_READ_MAX = 64 * 1024;

export function refusePeerRequest(req: AnyRequest, res: AnyResponse, reason: string, forbidden = false): void {
  const type = String(req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/grpc")) {
    const web = type.startsWith("application/grpc-web");
    // 16 UNAUTHENTICATED, or 7 PERMISSION_DENIED for a request refused whoever sends it.
    const headers = { "content-type": web ? "application/grpc-web+proto" : "application/grpc", "grpc-status": forbidden ? "7" : "16", "grpc-message": encodeURIComponent(reason) };
    // gRPC over HTTP/2: a trailers-only answer (one HEADERS frame that ends the stream). A caller
    // whose reset came with its headers is gone before this runs, and respond() would throw on
    // the closed stream, out of the request handler: the node would exit (the compat response
    // of the other answers checks this itself).
    if ("stream" in req && !web) {
      if (!req.stream.destroyed && !req.stream.closed) req.stream.respond({ ":status": 200, ...headers }, { endStream: true });
    } else {
      if (!("stream" in req) && declaresBody(req.headers)) discardRest(req, 0, REFUSED_GRPC_BODY_READ_MAX);
      (res as ServerResponse).writeHead(200, headers);
      res.end();
    }
    return;
  }
  const extra = forbidden ? [] : ["WWW-Authenticate", 'Bearer realm="hypercache-peer"'];
  if (!("stream" in req) && declaresBody(req.headers)) extra.push("Connection", "close");
  const envelope = forbidden ? { error: reason, code: "FORBIDDEN", details: { reason: CROSS_SITE_REASON } } : { error: reason, code: "UNAUTHORIZED" };
  writeJson(res as ServerResponse, forbidden ? 403 : 401, JSON.stringify(envelope), false, extra);
}

/**
 * Why a request a browser sent is refused, or undefined. Peers never send `Origin` or
 * `Sec-Fetch-Site`; a browser always does on the writes a page can make. In protected mode the
 * dist listener serves any loopback caller, and a browser on the node's own host is one: a page
 * on any site wrote keys (`POST /internal/set` as text/plain) and drained the node (a review).
 */
export function browserRequestRefusal(headers: IncomingHttpHeaders): string | undefined {
  if (headers.origin === undefined && headers["sec-fetch-site"] === undefined) return undefined;
  return "the peer port serves peers only, and a browser sent this request (Origin or Sec-Fetch-Site)";
}
