// mTLS identities: the subject CN of the VERIFIED client certificate of the request's
// connection selects a `cert_identities` entry. Only sockets that completed a handshake with a
// certificate the listener's CA verified (`authorized`) count; the listener itself refuses
// unverifiable certificates when SERVICE_API_TLS_CLIENT_CA is set.
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { makeIdentity, type Identity, type RateLimitOverride, type Scope } from "./identity.js";

export interface CertIdentity {
  readonly subjectCn: string;
  readonly scopes: readonly Scope[];
  /** The identity's own rate limit (policy file). */
  readonly rateLimit?: RateLimitOverride;
}

/** What the connection presented: no certificate, or one with its CN (undefined when not a single CN). */
export type PeerCertificate = { readonly present: false } | { readonly present: true; readonly verified: boolean; readonly cn: string | undefined };

const ABSENT: PeerCertificate = Object.freeze({ present: false });

export class CertIdentityTable {
  private readonly byCn: ReadonlyMap<string, Identity>;
  /** Per connection: the certificate is read once, not on every keep-alive request. */
  private readonly seen = new WeakMap<object, PeerCertificate>();

  constructor(entries: readonly CertIdentity[]) {
    this.byCn = new Map(entries.map((e) => [e.subjectCn, makeIdentity("cert", e.subjectCn, e.scopes, e.rateLimit)]));
  }

  get size(): number {
    return this.byCn.size;
  }

  /** The identity of a verified certificate's CN, or undefined. */
  match(cert: PeerCertificate): Identity | undefined {
    if (!cert.present || !cert.verified || cert.cn === undefined) return undefined;
    return this.byCn.get(cert.cn);
  }

  /** The client certificate of a connection (plaintext connections have none). */
  peerCertificate(socket: Socket | TLSSocket): PeerCertificate {
    if (!isTls(socket)) return ABSENT;
    const known = this.seen.get(socket);
    if (known !== undefined) return known;
    const cert = readCertificate(socket);
    this.seen.set(socket, cert);
    return cert;
  }
}

function isTls(socket: Socket | TLSSocket): socket is TLSSocket {
  return (socket as TLSSocket).encrypted === true && typeof (socket as TLSSocket).getPeerCertificate === "function";
}

function readCertificate(socket: TLSSocket): PeerCertificate {
  let cert: ReturnType<TLSSocket["getPeerCertificate"]> | undefined;
  try {
    cert = socket.getPeerCertificate();
  } catch {
    return ABSENT;
  }
  if (cert === undefined || cert === null || Object.keys(cert).length === 0) return ABSENT;
  const cn: unknown = cert.subject?.CN;
  return { present: true, verified: socket.authorized === true, cn: typeof cn === "string" && cn !== "" ? cn : undefined };
}
