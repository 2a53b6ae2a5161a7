// Fakes for chain tests: requests with chosen headers on plaintext or TLS sockets, and a chain
// built from small parts.
import type { IncomingMessage } from "node:http";
import bcrypt from "bcryptjs";
import type { Authenticator } from "../../../src/auth/authenticator.js";
import { BasicVerifier, type PasswordCompare } from "../../../src/auth/basic-auth.js";
import { buildChain, type BearerVerifier } from "../../../src/auth/chain.js";
import { CertIdentityTable } from "../../../src/auth/client-cert.js";
import { CacheError } from "../../../src/core/errors.js";
import { makeIdentity, type Identity } from "../../../src/auth/identity.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { ManualClock } from "../../helpers/manual-clock.js";

export const PASSWORD_HASH = bcrypt.hashSync("alice-pw", 4);

/** bcryptjs with a counter of real checks. */
export function countingCompare(): { compare: PasswordCompare; calls: () => number } {
  let calls = 0;
  return {
    compare: (password, hash) => {
      calls++;
      return bcrypt.compare(password, hash);
    },
    calls: () => calls,
  };
}

export interface FakeSocket {
  encrypted?: boolean;
  authorized?: boolean;
  getPeerCertificate?: () => Record<string, unknown>;
}

export const plaintext = (): FakeSocket => ({});
export const tlsNoCert = (): FakeSocket => ({ encrypted: true, authorized: false, getPeerCertificate: () => ({}) });
export const tlsCert = (cn: string, authorized = true): FakeSocket => ({ encrypted: true, authorized, getPeerCertificate: () => ({ subject: { CN: cn } }) });

export function request(authorization: string | undefined, socket: FakeSocket = plaintext()): IncomingMessage {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  return { headers, socket } as unknown as IncomingMessage;
}

/** An OIDC stand-in: "jwt.<id>.<scopes>" verifies, anything else is refused. */
export function fakeOidc(): BearerVerifier & { calls: number } {
  const v = {
    calls: 0,
    verify(token: string): Promise<Identity> {
      v.calls++;
      const [, id, scopes] = token.split(".");
      if (token.startsWith("jwt.") && id) return Promise.resolve(makeIdentity("oidc", id, (scopes ?? "").split("_").filter((s) => s === "read" || s === "write" || s === "admin") as never));
      return Promise.reject(new CacheError("UNAUTHORIZED", "bearer token invalid"));
    },
  };
  return v;
}

export interface ChainOptions {
  tokens?: boolean;
  users?: boolean;
  certs?: boolean;
  oidc?: BearerVerifier;
  allowAnonymous?: boolean;
  allowBasicWithoutTls?: boolean;
}

/** A chain with a static token `static-1` (read), user alice (write), cert CN svc-a (admin). */
export function chain(o: ChainOptions = {}): Authenticator {
  return buildChain({
    tokens: new StaticTokenTable(o.tokens === false ? [] : [{ id: "static-1", token: "static-token-1", scopes: ["read"] }]),
    basic: new BasicVerifier(o.users === false ? [] : [{ username: "alice", passwordHash: PASSWORD_HASH, scopes: ["write"] }], { clock: new ManualClock() }),
    certs: new CertIdentityTable(o.certs === false ? [] : [{ subjectCn: "svc-a", scopes: ["admin"] }]),
    oidc: o.oidc,
    allowAnonymous: o.allowAnonymous ?? false,
    allowBasicWithoutTls: o.allowBasicWithoutTls ?? false,
  });
}

/** The identity, or the error code the chain answered with. */
export async function resolve(auth: Authenticator, req: IncomingMessage): Promise<Identity | string> {
  try {
    return await auth.authenticate(req);
  } catch (err) {
    if (err instanceof CacheError) return err.code;
    throw err;
  }
}

export const basicHeader = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;
