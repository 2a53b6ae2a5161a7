// TLS material of the peer transport (SERVICE_DIST_TLS_CERT, _KEY, _CA): mutual TLS, every node
// verifies every peer against the CA. The same options serve the dist listener
// (createSecurePeerServer) and the peer client.
import { readTlsMaterial, sameCa, TlsMaterialError, type TlsFiles } from "../config/index.js";

/** Node TLS options of the peer transport. */
export interface PeerTlsOptions {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * The peer transport's TLS options, or undefined when SERVICE_DIST_TLS_* are unset. Throws
 * TlsMaterialError for an unreadable or unusable file.
 *
 * For the peer client: pass them to `http2.connect(url, { ...opts })` or
 * `new https.Agent({ ...opts })` with an `https://` base URL. The client presents `cert` as its
 * client certificate and verifies the peer against `ca`, hostname included: each node's
 * certificate needs its advertised dist host in its subjectAltName (IP:… or DNS:…).
 */
export function peerTlsOptions(files: TlsFiles | undefined, nowMs: number): PeerTlsOptions | undefined {
  if (files === undefined) return undefined;
  const m = readTlsMaterial(files, "dist", nowMs);
  if (m.ca === undefined) throw new TlsMaterialError("SERVICE_DIST_TLS_CA: required with SERVICE_DIST_TLS_CERT: every node verifies every peer");
  return Object.freeze({ ca: m.ca, cert: m.cert, key: m.key });
}

/** Peer TLS options that follow a reloaded certificate, and how to replace them. */
export interface LivePeerTls {
  /**
   * Options whose fields read the set in use: own getters, so `{ ...options }` (as the peer
   * client passes them to each new session) copies the current files.
   */
  readonly options: PeerTlsOptions;
  /** Puts `next` in use; when its CA differs, tells every `onTrustChange` listener. */
  replace(next: PeerTlsOptions): void;
  /**
   * `listener` hears of every change of the CA: the sessions verified under the old one must end
   * (a renewed certificate alone changes no one's trust).
   */
  onTrustChange(listener: () => void): void;
}

export function livePeerTls(initial: PeerTlsOptions): LivePeerTls {
  let current = initial;
  const listeners: Array<() => void> = [];
  const options: PeerTlsOptions = {
    get ca() {
      return current.ca;
    },
    get cert() {
      return current.cert;
    },
    get key() {
      return current.key;
    },
  };
  return {
    options,
    replace: (next) => {
      const trustChanged = !sameCa(next.ca, current.ca);
      current = next;
      if (trustChanged) for (const l of listeners) l();
    },
    onTrustChange: (listener) => void listeners.push(listener),
  };
}
