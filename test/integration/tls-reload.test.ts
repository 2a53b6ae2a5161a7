// A renewed certificate is used without a restart (cert-manager renews a Secret in place). Before
// SERVICE_TLS_RELOAD_INTERVAL the listeners read their files at start only: a node kept serving
// the old certificate until it expired, and with a shared peer certificate every node refused
// every other at once.
import { expect } from "chai";
import { X509Certificate } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { LOG } from "../../src/log/index.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

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

const fingerprintOf = (path: string) => new X509Certificate(readFileSync(path)).fingerprint256;

/** Replaces `to` the way a Secret update does: a new file renamed over the old one. */
function swap(from: string, to: string): void {
  copyFileSync(from, `${to}.new`);
  renameSync(`${to}.new`, to);
}

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
});
