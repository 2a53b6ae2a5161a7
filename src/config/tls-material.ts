// Reading a listener's PEM certificate, key and CA bundle at boot, checked by building a TLS
// context from them, so that a missing file, a bad PEM or a key that does not belong to the
// certificate fails the boot with the variable's name instead of the first handshake.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import tls from "node:tls";
import type { TlsFiles } from "./config.js";

/** The PEM bytes of a listener: Node TLS options `cert`, `key` and `ca`. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer | undefined;
}

/** A TLS file cannot be read or used; server.ts exits with code 2. */
export class TlsMaterialError extends Error {
  override readonly name = "TlsMaterialError";
}

export type TlsListener = "api" | "mgmt" | "dist";

const VARIABLES: Readonly<Record<TlsListener, { cert: string; key: string; ca: string }>> = Object.freeze({
  api: { cert: "SERVICE_API_TLS_CERT", key: "SERVICE_API_TLS_KEY", ca: "SERVICE_API_TLS_CLIENT_CA" },
  mgmt: { cert: "SERVICE_MGMT_TLS_CERT", key: "SERVICE_MGMT_TLS_KEY", ca: "" },
  dist: { cert: "SERVICE_DIST_TLS_CERT", key: "SERVICE_DIST_TLS_KEY", ca: "SERVICE_DIST_TLS_CA" },
});

/** Leeway for a certificate issued a moment ago by a clock somewhat ahead of this node's. */
const NOT_BEFORE_LEEWAY_MS = 5 * 60_000;

/**
 * Reads and checks the files of one listener at `nowMs`; throws TlsMaterialError naming the
 * variable.
 */
export function readTlsMaterial(files: TlsFiles, listener: TlsListener, nowMs: number, readFile: (p: string) => Buffer = readFileSync): TlsMaterial {
  const vars = VARIABLES[listener];
  const read = (variable: string, path: string): Buffer => {
    try {
      return readFile(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new TlsMaterialError(`${variable}: cannot read ${path}: ${code === "ENOENT" ? "no such file" : String(err)}`);
    }
  };
  const material: TlsMaterial = {
    cert: read(vars.cert, files.certFile),
    key: read(vars.key, files.keyFile),
    ca: files.caFile ? read(vars.ca, files.caFile) : undefined,
  };
  const cas = material.ca === undefined ? undefined : checkCaBundle(material.ca, vars.ca);
  try {
    tls.createSecureContext({ cert: material.cert, key: material.key, ca: material.ca });
  } catch (err) {
    const what = [vars.cert, vars.key, files.caFile ? vars.ca : ""].filter((v) => v !== "").join(", ");
    throw new TlsMaterialError(`${what}: unusable certificate, key or CA (${err instanceof Error ? err.message : String(err)})`);
  }
  checkCertificate(material, listener, nowMs, cas);
  return Object.freeze(material);
}

/**
 * The node's own certificate must be valid now and, for the peer listener, chain to the peer CA:
 * a TLS context takes an expired certificate, or one of another CA, and every handshake then
 * fails. A review swapped a node's peer certificate for an expired one: the reload was logged as
 * done, and the cluster split.
 */
function checkCertificate(material: TlsMaterial, listener: TlsListener, nowMs: number, cas: readonly X509Certificate[] | undefined): void {
  const variable = VARIABLES[listener].cert;
  const chain = (material.cert.toString("utf8").match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
  const leaf = chain[0];
  if (leaf === undefined) throw new TlsMaterialError(`${variable}: no PEM certificate`);
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  if (nowMs > to) throw new TlsMaterialError(`${variable}: the certificate expired at ${new Date(to).toISOString()}`);
  if (nowMs + NOT_BEFORE_LEEWAY_MS < from) throw new TlsMaterialError(`${variable}: the certificate is valid only from ${new Date(from).toISOString()}`);
  if (listener === "dist" && cas !== undefined && !chainsTo(chain, cas)) {
    throw new TlsMaterialError(`${variable}: the certificate does not chain to a CA of ${VARIABLES.dist.ca}: peers verifying with that CA would refuse it`);
  }
}

/** Whether `chain` (a leaf, then intermediates in any order) leads to a certificate of `cas`. */
function chainsTo(chain: readonly X509Certificate[], cas: readonly X509Certificate[]): boolean {
  let current = chain[0] as X509Certificate;
  for (let step = 0; step <= chain.length; step++) {
    if (cas.some((ca) => issuedBy(current, ca))) return true;
    const next = chain.find((c) => c !== current && issuedBy(current, c));
    if (next === undefined) return false;
    current = next;
  }
  return false;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * A CA bundle must hold at least one parsable certificate: Node silently ignores a file without
 * any, and the listener would then refuse every client (or, worse, look configured and not be).
 * Returns the bundle's certificates.
 */
function checkCaBundle(ca: Buffer, variable: string): X509Certificate[] {
  const blocks = ca.toString("utf8").match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TlsMaterialError(`${variable}: no PEM certificate in the CA bundle`);
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new TlsMaterialError(`${variable}: unusable certificate in the CA bundle (${err instanceof Error ? err.message : String(err)})`);
    }
  });
}

/** The certificates of a PEM bundle (each parsable: checkCaBundle ran on it). */
function bundleCertificates(ca: Buffer): X509Certificate[] {
  return (ca.toString("utf8").match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
}

/**
 * Whether two CA bundles are the same bytes (none and none included): what decides that a reload
 * changed someone's trust, so that the connections verified under the old bundle must end.
 */
export function sameCa(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}

/**
 * The subject of a CA that both bundles trust, or undefined. Pure. Two certificates are one CA
 * when they hold the same public key (a CA renewed with its key and subject is a new certificate
 * with a new fingerprint, and verifies the same certificates: compared by fingerprint, a renewed
 * copy in one bundle let every client certificate be a peer); a certificate of one bundle that a
 * CA of the other issued chains to it as well.
 */
export function sharedCaSubject(a: Buffer, b: Buffer): string | undefined {
  const inA = bundleCertificates(a);
  const inB = bundleCertificates(b);
  const subject = (c: X509Certificate) => c.subject.replace(/\n/g, ", ");
  const keysOfA = new Set(inA.map(spkiOf));
  const sameKey = inB.find((c) => keysOfA.has(spkiOf(c)));
  if (sameKey !== undefined) return subject(sameKey);
  for (const x of inA) {
    for (const y of inB) {
      if (issuedBy(x, y)) return subject(y);
      if (issuedBy(y, x)) return subject(x);
    }
  }
  return undefined;
}

function spkiOf(c: X509Certificate): string {
  return c.publicKey.export({ type: "spki", format: "der" }).toString("base64");
}

/** Whether `cert` names `issuer` as its issuer and carries its signature. */
function issuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

/**
 * With peer mutual TLS and no peer token, the peer CA alone decides who is a peer: every
 * certificate it signed may write any key, gossip its way into the ring and drain the node. When
 * that CA also signs the client API's certificates, every client (a read-only one too) is a
 * peer: refused at boot (found by a review: a client certificate answered 401 on the client API
 * wrote through /internal/set). A peer token, or a CA for node certificates only, resolves it.
 */
export function checkPeerCredential(peerToken: string | undefined, apiClientCa: Buffer | undefined, peerCa: Buffer | undefined): void {
  if (peerToken || apiClientCa === undefined || peerCa === undefined) return;
  const shared = sharedCaSubject(apiClientCa, peerCa);
  if (shared === undefined) return;
  throw new TlsMaterialError(
    `SERVICE_DIST_TLS_CA shares the CA ${JSON.stringify(shared)} with SERVICE_API_TLS_CLIENT_CA and no SERVICE_PEER_TOKEN is set: ` +
      `every client certificate it signed would be a peer credential (able to write any key, join the ring and drain the node); ` +
      `set SERVICE_PEER_TOKEN on every node, or give SERVICE_DIST_TLS_CA a CA that signs node certificates only`,
  );
}
