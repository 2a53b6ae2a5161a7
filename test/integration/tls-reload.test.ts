// A renewed certificate is used without a restart (cert-manager renews a Secret in place). Before
// SERVICE_TLS_RELOAD_INTERVAL the listeners read their files at start only: a node kept serving
// the old certificate until it expired, and with a shared peer certificate every node refused
// every other at once.
import { expect } from "chai";
import { X509Certificate } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { LOG } from "../../src/log/index.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { handshakeRelay } from "../helpers/handshake-relay.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { replaceFile } from "../helpers/replace-file.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The SHA-256 fingerprint of the certificate a TLS listener serves now (a new connection). */
function servedFingerprint(port: number, options: tls.ConnectionOptions = {}): Promise<{ fingerprint: string; authorized: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...options }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const authorized = socket.authorized;
      socket.destroy();
      resolve({ fingerprint, authorized });
    });
    socket.on("error", reject);
  });
}

/** An HTTP/1.1 connection of the client API under a client certificate, read as raw text. */
interface RawTls {
  readonly socket: tls.TLSSocket;
  /** Everything received so far. */
  text(): string;
  /** Resolves when the server ended the connection. */
  readonly closed: Promise<void>;
}

function connectWithCert(port: number, certs: TestCerts, pair: { cert: string; key: string }): Promise<RawTls> {
  return new Promise((resolve, reject) => {
    let received = "";
    let ended: () => void = () => undefined;
    const closed = new Promise<void>((r) => (ended = r));
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false, cert: certs.pem(pair.cert), key: certs.pem(pair.key) }, () => resolve({ socket, text: () => received, closed }));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => ended());
    socket.on("error", reject);
  });
}

/** Waits until `c` received `count` complete answer heads. */
async function answers(c: RawTls, count: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const heads = c.text().split("HTTP/1.1 ").slice(1);
    if (heads.length >= count && heads.every((h) => h.includes("\r\n\r\n"))) return heads;
    await sleep(20);
  }
  throw new Error(`fewer than ${count} answers: ${c.text().slice(0, 500)}`);
}

/** Whether a new handshake with `pair` completes and answers /healthz. */
async function handshakeWorks(port: number, certs: TestCerts, pair: { cert: string; key: string }): Promise<boolean> {
  try {
    const c = await connectWithCert(port, certs, pair);
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const ok = await Promise.race([answers(c, 1).then(() => true), c.closed.then(() => false)]);
    c.socket.destroy();
    return ok;
  } catch {
    return false;
  }
}

const fingerprintOf = (path: string) => new X509Certificate(readFileSync(path)).fingerprint256;

/** Replaces `to` with the file `from`, the way a Secret update does. */
const swap = (from: string, to: string) => replaceFile(to, readFileSync(from));

describe("TLS files reloaded while the node runs", function () {
  this.timeout(60_000);
  let a: TestCerts;
  let b: TestCerts;
  let dir: string;
  let node: NodeProcess | undefined;

  before(() => {
    a = makeTestCerts(["client"]);
    b = makeTestCerts(["client"]);
    dir = mkdtempSync(join(tmpdir(), "tls-reload-"));
  });
  after(async () => {
    await node?.stop("SIGKILL");
    a?.cleanup();
    b?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a renewed certificate and CA are served to new connections of the client and peer listeners; a broken file is logged and the last good set stays", async () => {
    const files = { cert: join(dir, "tls.crt"), key: join(dir, "tls.key"), ca: join(dir, "ca.crt") };
    copyFileSync(a.server.cert, files.cert);
    copyFileSync(a.server.key, files.key);
    copyFileSync(a.ca.cert, files.ca);
    node = await startNode({
      id: "tls-reload",
      env: {
        SERVICE_API_TLS_CERT: files.cert,
        SERVICE_API_TLS_KEY: files.key,
        SERVICE_DIST_TLS_CERT: files.cert,
        SERVICE_DIST_TLS_KEY: files.key,
        SERVICE_DIST_TLS_CA: files.ca,
        SERVICE_TLS_RELOAD_INTERVAL: "200ms",
      },
    });
    expect((await servedFingerprint(node.apiPort)).fingerprint).to.equal(fingerprintOf(a.server.cert));
    const peerClient = (certs: TestCerts) => ({ ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.clients.client!.cert), key: certs.pem(certs.clients.client!.key), ALPNProtocols: ["h2"], servername: "localhost" });
    expect((await servedFingerprint(node.distPort, peerClient(a))).authorized, "a peer of CA A").to.equal(true);

    swap(b.server.cert, files.cert);
    swap(b.server.key, files.key);
    swap(b.ca.cert, files.ca);
    let served = "";
    for (let i = 0; i < 50 && served !== fingerprintOf(b.server.cert); i++) {
      await sleep(100);
      served = (await servedFingerprint(node.apiPort)).fingerprint;
    }
    // Before: the node served certificate A until it restarted.
    expect(served, "the client listener serves the renewed certificate").to.equal(fingerprintOf(b.server.cert));
    await sleep(500);
    const peer = await servedFingerprint(node.distPort, peerClient(b));
    expect(peer.fingerprint, "the peer listener serves it too").to.equal(fingerprintOf(b.server.cert));
    expect(peer.authorized, "and trusts peers of the new CA").to.equal(true);
    const reloaded = node.logs.filter((r) => r.message === LOG.tlsReloaded).map((r) => r.listener);
    expect(reloaded).to.include.members(["api", "dist"]);

    writeFileSync(files.cert, "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n");
    await sleep(1_000);
    expect(node.logs.some((r) => r.message === LOG.tlsReloadFailed && r.listener === "api"), "the broken file is reported").to.equal(true);
    expect((await servedFingerprint(node.apiPort)).fingerprint, "the last good certificate stays").to.equal(fingerprintOf(b.server.cert));
    expect(node.child.exitCode).to.equal(null);
  });

  /** A node with mutual TLS on its client API, its files (the CA one to be swapped) in `dir`. */
  async function startMtlsNode(id: string): Promise<{ certs: TestCerts; files: { cert: string; key: string; ca: string }; node: NodeProcess }> {
    const certs = makeTestCerts(["client"]);
    const files = { cert: join(dir, `${id}.crt`), key: join(dir, `${id}.key`), ca: join(dir, `${id}-ca.crt`) };
    copyFileSync(certs.server.cert, files.cert);
    copyFileSync(certs.server.key, files.key);
    copyFileSync(certs.ca.cert, files.ca);
    const node = await startNode({
      id,
      env: { SERVICE_API_TLS_CERT: files.cert, SERVICE_API_TLS_KEY: files.key, SERVICE_API_TLS_CLIENT_CA: files.ca, SERVICE_TLS_RELOAD_INTERVAL: "200ms" },
    });
    return { certs, files, node };
  }

  it("a changed client CA ends the connections verified under the old one: idle ones at once, one in a request after its answer (Connection: close)", async () => {
    const { certs: c, files, node: mtls } = await startMtlsNode("tls-reload-ca");
    try {
      const client = c.clients.client!;
      const idle = await connectWithCert(mtls.apiPort, c, client);
      idle.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
      expect((await answers(idle, 1))[0]).to.match(/^200 /);
      const busy = await connectWithCert(mtls.apiPort, c, client);
      busy.socket.write("PUT /v1/cache/rotated HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf-");
      await sleep(200);

      swap(c.foreignCa.cert, files.ca);
      let refused = false;
      for (let i = 0; i < 50 && !refused; i++) {
        await sleep(100);
        refused = !(await handshakeWorks(mtls.apiPort, c, client));
      }
      expect(refused, "a new handshake with a certificate of the old CA is refused").to.equal(true);
      expect(await handshakeWorks(mtls.apiPort, c, c.foreignClient), "and one of the new CA is taken").to.equal(true);

      // Before: both connections lived on, and served every later request, under the old CA.
      const idleClosed = await Promise.race([idle.closed.then(() => true), sleep(2000).then(() => false)]);
      expect(idleClosed, "the idle connection of the old CA is closed").to.equal(true);
      expect(busy.socket.destroyed, "the connection in a request stays until its answer").to.equal(false);
      busy.socket.write("body!");
      const [head] = await answers(busy, 1);
      expect(head, "the request under way is answered").to.match(/^200 /);
      expect(head!.toLowerCase(), "with Connection: close").to.contain("connection: close");
      const busyClosed = await Promise.race([busy.closed.then(() => true), sleep(2000).then(() => false)]);
      expect(busyClosed, "and the connection ends after it").to.equal(true);
      expect(mtls.logs.some((r) => r.message === LOG.tlsReloaded && r.listener === "api")).to.equal(true);
    } finally {
      await mtls.stop("SIGKILL");
      c.cleanup();
    }
  });

  it("without a peer token, a reloaded client CA that shares a certificate with the peer CA is refused like at boot: logged, and the CA in use stays", async () => {
    const files = { cert: join(dir, "shared.crt"), key: join(dir, "shared.key"), apiCa: join(dir, "shared-api-ca.crt"), distCa: join(dir, "shared-dist-ca.crt") };
    copyFileSync(a.server.cert, files.cert);
    copyFileSync(a.server.key, files.key);
    copyFileSync(a.ca.cert, files.apiCa);
    copyFileSync(b.ca.cert, files.distCa);
    const n = await startNode({
      id: "tls-reload-shared",
      env: {
        SERVICE_API_TLS_CERT: files.cert,
        SERVICE_API_TLS_KEY: files.key,
        SERVICE_API_TLS_CLIENT_CA: files.apiCa,
        SERVICE_DIST_TLS_CERT: b.server.cert,
        SERVICE_DIST_TLS_KEY: b.server.key,
        SERVICE_DIST_TLS_CA: files.distCa,
        SERVICE_TLS_RELOAD_INTERVAL: "200ms",
      },
    });
    try {
      expect(await handshakeWorks(n.apiPort, a, a.clients.client!), "a client of CA A").to.equal(true);
      // What would exit 2 at boot: every certificate of the peer CA a client credential too.
      swap(b.ca.cert, files.apiCa);
      await n.waitForLog(LOG.tlsReloadFailed, 5000, (r) => r.listener === "api");
      const failure = n.logs.find((r) => r.message === LOG.tlsReloadFailed && r.listener === "api");
      expect(String(failure?.error)).to.contain("SERVICE_PEER_TOKEN");
      expect(n.logs.some((r) => r.message === LOG.tlsReloaded && r.listener === "api"), "the shared CA was taken").to.equal(false);
      expect(await handshakeWorks(n.apiPort, a, a.clients.client!), "the CA in use stays").to.equal(true);
      expect(await handshakeWorks(n.apiPort, b, b.clients.client!), "a client of the peer CA is not let in").to.equal(false);

      // The same from the other side: a peer CA reloaded to the client CA in use.
      swap(a.ca.cert, files.distCa);
      await n.waitForLog(LOG.tlsReloadFailed, 5000, (r) => r.listener === "dist");
      expect(n.logs.some((r) => r.message === LOG.tlsReloaded && r.listener === "dist"), "the shared peer CA was taken").to.equal(false);
      const peerOf = (certs: TestCerts) => ({ ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.clients.client!.cert), key: certs.pem(certs.clients.client!.key), ALPNProtocols: ["h2"], servername: "localhost" });
      expect((await servedFingerprint(n.distPort, peerOf(b))).authorized, "a peer of the CA in use still connects").to.equal(true);
    } finally {
      await n.stop("SIGKILL");
    }
  });

  it("a handshake held back across a client CA change (checked against the old CA) ends as it completes: its request is not taken", async () => {
    const { certs: c, files, node: n } = await startMtlsNode("tls-reload-held");
    const relay = await handshakeRelay(n.apiPort);
    try {
      const held = await connectWithCert(relay.port, c, c.clients.client!);
      held.socket.on("error", () => undefined);
      held.socket.write("PUT /v1/cache/held HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
      swap(c.foreignCa.cert, files.ca);
      await n.waitForLog(LOG.tlsReloaded, 5000, (r) => r.listener === "api");
      relay.release();
      // Before: answered 200, and every later request on the connection too.
      await held.closed;
      expect(held.text(), "no answer").to.equal("");
      const check = await connectWithCert(n.apiPort, c, c.foreignClient);
      check.socket.write("GET /v1/cache/held HTTP/1.1\r\nHost: x\r\n\r\n");
      expect((await answers(check, 1))[0], "the held request was not taken").to.match(/^404 /);
      check.socket.destroy();
    } finally {
      relay.close();
      await n.stop("SIGKILL");
      c.cleanup();
    }
  });

  it("a client CA refused because of the peer CA in use is read again once the peer CA changes", async () => {
    const c = makeTestCerts(["client"]);
    const d = makeTestCerts(["client"]);
    const e = makeTestCerts(["client"]);
    const files = { apiCa: join(dir, "cross-api-ca.crt"), distCa: join(dir, "cross-dist-ca.crt"), distCert: join(dir, "cross-dist.crt"), distKey: join(dir, "cross-dist.key") };
    copyFileSync(c.ca.cert, files.apiCa);
    copyFileSync(d.ca.cert, files.distCa);
    copyFileSync(d.server.cert, files.distCert);
    copyFileSync(d.server.key, files.distKey);
    const n = await startNode({
      id: "tls-reload-cross",
      env: {
        SERVICE_API_TLS_CERT: c.server.cert, SERVICE_API_TLS_KEY: c.server.key, SERVICE_API_TLS_CLIENT_CA: files.apiCa,
        SERVICE_DIST_TLS_CERT: files.distCert, SERVICE_DIST_TLS_KEY: files.distKey, SERVICE_DIST_TLS_CA: files.distCa,
        SERVICE_TLS_RELOAD_INTERVAL: "200ms",
      },
    });
    try {
      // The client CA moves to D first, refused while the peer CA is still D; then the peer CA moves to E.
      swap(d.ca.cert, files.apiCa);
      await n.waitForLog(LOG.tlsReloadFailed, 5000, (r) => r.listener === "api");
      // The peer side rotates to E: its CA with a certificate of it (one of D would not chain to E).
      swap(e.server.key, files.distKey);
      swap(e.server.cert, files.distCert);
      swap(e.ca.cert, files.distCa);
      let taken = false;
      for (let i = 0; i < 40 && !taken; i++) {
        await sleep(100);
        taken = await handshakeWorks(n.apiPort, d, d.clients.client!);
      }
      // Before: the client CA refused at the first look was never read again: C stayed trusted.
      expect(taken, "a client of the new CA D is taken").to.equal(true);
      expect(await handshakeWorks(n.apiPort, c, c.clients.client!), "a client of the removed CA C is not").to.equal(false);
    } finally {
      await n.stop("SIGKILL");
      c.cleanup();
      d.cleanup();
      e.cleanup();
    }
  });
});
