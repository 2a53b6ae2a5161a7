// TLS on real processes with certificates generated at run time: HTTPS on the client listener,
// mutual TLS with client-certificate identities (subject CN -> cert_identities), Basic over
// HTTPS, TLS on the management listener, and mutual TLS plus the peer token on the dist listener.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { expectAllowed, expectForbidden, expectUnauthorized } from "../helpers/auth-expect.js";
import { makeTestCerts, type CertPair, type TestCerts } from "../helpers/certs.js";
import { basic, bearer, call, type CallOptions } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { freePorts } from "../helpers/ports.js";

const PEER_TOKEN = "peer-secret-for-tls";

/**
 * The request failed during the TLS handshake: the server refused the client certificate (TLS 1.3
 * alert "certificate required", or a reset once it saw a certificate it cannot verify). A
 * refused connection would mean the listener is down, which proves nothing.
 */
async function expectHandshakeRefused(p: Promise<unknown>): Promise<void> {
  const err: NodeJS.ErrnoException = await p.then(
    (r) => new Error(`expected a handshake failure, got an answer ${JSON.stringify((r as { status?: number }).status)}`),
    (e: NodeJS.ErrnoException) => e,
  );
  expect(err.code, err.message).to.be.oneOf(["ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED", "ECONNRESET", "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA", "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE", "EPIPE"]);
}

describe("auth: TLS and mutual TLS on real nodes", () => {
  let certs: TestCerts;
  let dir: string;
  let mtls: NodeProcess;
  let https: NodeProcess;
  const https_ = (n: NodeProcess, listener: "apiPort" | "mgmtPort" | "distPort") => `https://127.0.0.1:${n[listener]}`;
  /** TLS options of a test client: our CA, and optionally a client certificate. */
  const tlsFor = (client?: CertPair): CallOptions["tls"] => ({
    ca: certs.pem(certs.ca.cert),
    ...(client ? { cert: certs.pem(client.cert), key: certs.pem(client.key) } : {}),
  });

  before(async () => {
    certs = makeTestCerts(["svc-reader", "svc-admin", "stranger"]);
    dir = mkdtempSync(join(tmpdir(), "hypercache-tls-policy-"));
    const hash = bcrypt.hashSync("alice-password", 4);
    writeFileSync(
      join(dir, "auth.yaml"),
      [
        "cert_identities:",
        "  - {subject_cn: svc-reader, scopes: [read]}",
        "  - {subject_cn: svc-admin, scopes: [read, write, admin]}",
        "tokens:",
        "  - {id: full, token: tok-full, scopes: [read, write, admin]}",
        "users:",
        `  - {username: alice, password_hash: "${hash}", scopes: [read]}`,
      ].join("\n"),
    );
    const tls = {
      SERVICE_AUTH_CONFIG: join(dir, "auth.yaml"),
      SERVICE_API_TLS_CERT: certs.server.cert,
      SERVICE_API_TLS_KEY: certs.server.key,
    };
    [mtls, https] = await Promise.all([
      startNode({
        id: "auth-mtls",
        env: {
          ...tls,
          SERVICE_API_TLS_CLIENT_CA: certs.ca.cert,
          SERVICE_MGMT_TLS_CERT: certs.server.cert,
          SERVICE_MGMT_TLS_KEY: certs.server.key,
          SERVICE_DIST_TLS_CERT: certs.server.cert,
          SERVICE_DIST_TLS_KEY: certs.server.key,
          SERVICE_DIST_TLS_CA: certs.ca.cert,
          SERVICE_PEER_TOKEN: PEER_TOKEN,
        },
      }),
      startNode({ id: "auth-https", env: tls }),
    ]);
  });
  after(async () => {
    await Promise.all([mtls?.stop("SIGKILL"), https?.stop("SIGKILL")]);
    rmSync(dir, { recursive: true, force: true });
    certs?.cleanup();
  });

  describe("client listener with a client CA (mutual TLS)", () => {
    it("resolves a verified certificate's subject CN to its cert_identities entry", async () => {
      const r = await call(`${https_(mtls, "apiPort")}/v1/me`, { tls: tlsFor(certs.clients["svc-reader"]) });
      expect(r.status).to.equal(200);
      expect(r.json()).to.deep.equal({ id: "svc-reader", scopes: ["read"], capabilities: ["cache.read"] });
      const admin = await call(`${https_(mtls, "apiPort")}/v1/me`, { tls: tlsFor(certs.clients["svc-admin"]) });
      expect(admin.json()).to.include({ id: "svc-admin" });
    });

    it("enforces the cert identity's scopes (a read-only CN gets 403 on PUT, the admin CN writes)", async () => {
      expectForbidden(await call(`${https_(mtls, "apiPort")}/v1/cache/t1`, { method: "PUT", body: "x", tls: tlsFor(certs.clients["svc-reader"]) }));
      expectAllowed(await call(`${https_(mtls, "apiPort")}/v1/cache/t1`, { method: "PUT", body: "x", tls: tlsFor(certs.clients["svc-admin"]) }));
      const got = await call(`${https_(mtls, "apiPort")}/v1/cache/t1`, { tls: tlsFor(certs.clients["svc-reader"]) });
      expect(got.body.toString()).to.equal("x");
    });

    it("answers 401 with the envelope and a challenge to a verified certificate whose CN is not listed", async () => {
      const r = await call(`${https_(mtls, "apiPort")}/v1/me`, { tls: tlsFor(certs.clients.stranger) });
      expectUnauthorized(r);
      expect(r.json<{ error: string }>().error).to.match(/client certificate/);
    });

    it("lets an unlisted CN authenticate with a bearer token or Basic instead (first match wins)", async () => {
      const t = await call(`${https_(mtls, "apiPort")}/v1/me`, { headers: bearer("tok-full"), tls: tlsFor(certs.clients.stranger) });
      expect(t.json()).to.include({ id: "full" });
      const b = await call(`${https_(mtls, "apiPort")}/v1/me`, { headers: basic("alice", "alice-password"), tls: tlsFor(certs.clients.stranger) });
      expect(b.json()).to.include({ id: "alice" });
    });

    it("refuses a client without a certificate during the TLS handshake", async () => {
      await expectHandshakeRefused(call(`${https_(mtls, "apiPort")}/healthz`, { tls: tlsFor() }));
    });

    it("refuses a client certificate signed by another CA during the TLS handshake", async () => {
      await expectHandshakeRefused(call(`${https_(mtls, "apiPort")}/healthz`, { tls: tlsFor(certs.foreignClient) }));
    });

    it("still serves /healthz without an HTTP credential once the handshake succeeded", async () => {
      expect((await call(`${https_(mtls, "apiPort")}/healthz`, { tls: tlsFor(certs.clients.stranger) })).status).to.equal(200);
    });
  });

  describe("client listener with HTTPS only (no client CA)", () => {
    it("serves HTTPS with a certificate the test CA verifies for 127.0.0.1", async () => {
      expect((await call(`${https_(https, "apiPort")}/healthz`, { tls: tlsFor() })).status).to.equal(200);
    });

    it("accepts Basic over HTTPS (allow_basic_without_tls is false)", async () => {
      const r = await call(`${https_(https, "apiPort")}/v1/me`, { headers: basic("alice", "alice-password"), tls: tlsFor() });
      expect(r.status).to.equal(200);
      expect(r.json()).to.deep.include({ id: "alice", scopes: ["read"] });
    });

    it("still refuses Basic over the plaintext management listener", async () => {
      expectUnauthorized(await call(`${https.mgmt}/stats`, { headers: basic("alice", "alice-password") }));
      expect((await call(`${https.mgmt}/stats`, { headers: bearer("tok-full") })).status).to.equal(200);
    });

    it("answers 401 without a credential", async () => {
      expectUnauthorized(await call(`${https_(https, "apiPort")}/v1/me`, { tls: tlsFor() }));
    });
  });

  describe("management listener with TLS", () => {
    it("serves HTTPS: /health open, /stats with a credential", async () => {
      expect((await call(`${https_(mtls, "mgmtPort")}/health`, { tls: tlsFor() })).status).to.equal(200);
      expect((await call(`${https_(mtls, "mgmtPort")}/stats`, { headers: bearer("tok-full"), tls: tlsFor() })).status).to.equal(200);
      expectUnauthorized(await call(`${https_(mtls, "mgmtPort")}/stats`, { tls: tlsFor() }));
    });

    it("accepts Basic over its TLS", async () => {
      expect((await call(`${https_(mtls, "mgmtPort")}/v1/me`, { headers: basic("alice", "alice-password"), tls: tlsFor() })).status).to.equal(200);
    });

    it("does not answer plaintext HTTP", async () => {
      const r = await call(`${mtls.mgmt}/health`).then((x) => x.status, (err: Error) => err);
      expect(r).to.not.equal(200);
    });
  });

  describe("peer listener with mutual TLS and the peer token", () => {
    const peerCert = () => ({ cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key) });

    it("serves /health and /internal/keys over HTTPS to a peer certificate with the token", async () => {
      for (const path of ["/health", "/internal/keys?limit=5"]) {
        const r = await call(`${https_(mtls, "distPort")}${path}`, { headers: bearer(PEER_TOKEN), tls: { ca: certs.pem(certs.ca.cert), ...peerCert() } });
        expect(r.status, `${path} ${r.body.toString()}`).to.equal(200);
      }
    });

    it("still requires the token from a peer with a valid certificate (401 without it or with a wrong one)", async () => {
      const opts = { tls: { ca: certs.pem(certs.ca.cert), ...peerCert() } };
      expect((await call(`${https_(mtls, "distPort")}/health`, opts)).status).to.equal(401);
      expect((await call(`${https_(mtls, "distPort")}/internal/keys`, { ...opts, headers: bearer("wrong") })).status).to.equal(401);
    });

    it("refuses a client without a certificate or with a foreign one during the handshake", async () => {
      await expectHandshakeRefused(call(`${https_(mtls, "distPort")}/health`, { headers: bearer(PEER_TOKEN), tls: tlsFor() }));
      await expectHandshakeRefused(call(`${https_(mtls, "distPort")}/health`, { headers: bearer(PEER_TOKEN), tls: tlsFor(certs.foreignClient) }));
    });

    it("speaks HTTP/2 over TLS (ALPN) to a peer with a certificate and the token", async () => {
      const session = http2.connect(https_(mtls, "distPort"), { ca: certs.pem(certs.ca.cert), ...peerCert() });
      session.on("error", () => undefined);
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = session.request({ ":path": "/health", authorization: `Bearer ${PEER_TOKEN}` });
          req.on("response", (h) => resolve(Number(h[":status"])));
          req.on("error", reject);
          req.end();
          req.resume();
        });
        expect(status).to.equal(200);
      } finally {
        session.destroy();
      }
    });
  });

  describe("two nodes over the mutual-TLS peer transport", () => {
    let n1: NodeProcess;
    let n2: NodeProcess;
    before(async () => {
      const [a1, m1, d1, a2, m2, d2] = (await freePorts(6)) as [number, number, number, number, number, number];
      const env = {
        SERVICE_DIST_TLS_CERT: certs.server.cert,
        SERVICE_DIST_TLS_KEY: certs.server.key,
        SERVICE_DIST_TLS_CA: certs.ca.cert,
        SERVICE_AUTH_TOKEN: PEER_TOKEN,
        SERVICE_REPLICATION: "2",
      };
      [n1, n2] = await Promise.all([
        startNode({ id: "tls-a", ports: { api: a1, mgmt: m1, dist: d1 }, env: { ...env, SERVICE_SEEDS: `tls-b@127.0.0.1:${d2}` } }),
        startNode({ id: "tls-b", ports: { api: a2, mgmt: m2, dist: d2 }, env: { ...env, SERVICE_SEEDS: `tls-a@127.0.0.1:${d1}` } }),
      ]);
    });
    after(async () => {
      await Promise.all([n1?.stop("SIGKILL"), n2?.stop("SIGKILL")]);
    });

    it("replicate a write (consistency=all) from one node to the other", async () => {
      let put = await call(`${n1.api}/v1/cache/over-tls?consistency=all`, { method: "PUT", body: "secret", headers: bearer(PEER_TOKEN) });
      for (let i = 0; i < 40 && put.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        put = await call(`${n1.api}/v1/cache/over-tls?consistency=all`, { method: "PUT", body: "secret", headers: bearer(PEER_TOKEN) });
      }
      expect(put.status, put.body.toString()).to.equal(200);
      expect(put.json()).to.include({ stored: true });
      expect(put.json<{ owners: string[] }>().owners).to.have.members(["tls-a", "tls-b"]);
      const got = await call(`${n2.api}/v1/cache/over-tls`, { headers: bearer(PEER_TOKEN) });
      expect(got.status).to.equal(200);
      expect(got.body.toString()).to.equal("secret");
    });
  });
});
