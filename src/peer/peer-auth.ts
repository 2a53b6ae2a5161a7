// Bearer-token protection of the peer transport, compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** Constant-time equality of two secrets of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : undefined;
}

/** Rejects calls without the peer token with Unauthenticated (HTTP 401, gRPC status 16). */
export function peerTokenInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    const given = bearerToken(req.header.get("authorization"));
    if (given === undefined || !secretsEqual(given, token)) {
      throw new ConnectError("missing or wrong peer token", Code.Unauthenticated);
    }
    return next(req);
  };
}

/** Adds the peer token to every outgoing call. */
export function peerTokenSigner(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/** Raised by createPeerAuth for a setup that signs outgoing calls but accepts unsigned ones. */
export class InsecureAuthConfigError extends Error {
  override readonly name = "InsecureAuthConfigError";
}

export interface PeerAuthOptions {
  /** Token sent as `Authorization: Bearer` on every outgoing peer call. */
  readonly outboundToken?: string;
  /** Another outbound signing hook (an interceptor), instead of or after the token. */
  readonly outboundSigner?: Interceptor;
  /** Token every incoming peer call must carry (constant-time compare). */
  readonly inboundToken?: string;
  /** Another inbound verifier (an interceptor), instead of or after the token check. */
  readonly inboundVerifier?: Interceptor;
  /**
   * Accept unauthenticated incoming calls although outgoing calls are signed. Off by default:
   * such a node proves itself to its peers but lets anyone call it, which is almost always a
   * mistake (for example a token set on one side only).
   */
  readonly allowAnonymousInbound?: boolean;
}

/** Interceptors of the peer transport: `inbound` for the dist listener, `outbound` for the peer client. */
export interface PeerAuth {
  readonly inbound: readonly Interceptor[];
  readonly outbound: readonly Interceptor[];
}

/**
 * Builds the peer transport's auth. Throws InsecureAuthConfigError ("insecure auth config")
 * when outgoing calls are signed but incoming calls are not verified, unless anonymous inbound
 * access is explicitly allowed. Neither side configured is an open peer transport (main.ts warns
 * when client authentication is on).
 */
export function createPeerAuth(opts: PeerAuthOptions): PeerAuth {
  const outbound: Interceptor[] = [];
  if (opts.outboundToken) outbound.push(peerTokenSigner(opts.outboundToken));
  if (opts.outboundSigner) outbound.push(opts.outboundSigner);
  const inbound: Interceptor[] = [];
  if (opts.inboundToken) inbound.push(peerTokenInterceptor(opts.inboundToken));
  if (opts.inboundVerifier) inbound.push(opts.inboundVerifier);
  if (outbound.length > 0 && inbound.length === 0 && opts.allowAnonymousInbound !== true) {
    throw new InsecureAuthConfigError(
      "insecure auth config: peer calls are signed on the way out but incoming peer calls are not verified; " +
        "configure an inbound verifier (the same peer token) or set allowAnonymousInbound explicitly",
    );
  }
  return Object.freeze({ inbound: Object.freeze(inbound), outbound: Object.freeze(outbound) });
}
