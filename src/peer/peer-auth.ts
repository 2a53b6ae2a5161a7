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
