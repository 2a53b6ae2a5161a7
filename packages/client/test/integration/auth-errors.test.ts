// Every credential mode of @hypercache/client against the real authentication chain of a node
// (static bearer token and provider, Basic over HTTPS and refused over http, client certificate,
// OIDC client credentials from the test issuer), and the typed error of each code a node answers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { makeTestCerts, type TestCerts } from "../../../../test/helpers/certs.js";
import { startNode, type NodeProcess } from "../../../../test/helpers/node-process.js";
import { startOidcIssuer, type OidcIssuer } from "../../../../test/helpers/oidc-issuer.js";
import {
  AllEndpointsFailedError,
  BadRequestError,
  ClientConfigError,
  DrainingError,
  ForbiddenError,
  HypercacheClient,
  NotFoundError,
  PayloadTooLargeError,
  TokenRequestError,
  TooManyRequestsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  type FetchLike,
} from "../../src/node.js";
import { createNodeFetch } from "../../src/node.js";

describe("client credentials against a real node's auth chain", function () {
  this.timeout(60_000);
  let certs: TestCerts;
  let dir: string;
  let issuer: OidcIssuer;
  let tlsNode: NodeProcess;
  let mtlsNode: NodeProcess;
  let plainNode: NodeProcess;
  const ca = () => certs.pem(certs.ca.cert);

  before(async () => {
    certs = makeTestCerts(["svc-writer"]);
    issuer = await startOidcIssuer({ audience: "hypercache" });
    issuer.addClient("billing-svc", "s3cret", ["read", "write"], 60);
    dir = mkdtempSync(join(tmpdir(), "hypercache-sdk-auth-"));
    const policy = join(dir, "auth.yaml");
    writeFileSync(policy, [
      "tokens:",
      "  - {id: full, token: tok-full, scopes: [read, write, admin]}",
      "  - {id: reader, token: tok-reader, scopes: [read]}",
      "users:",
      `  - {username: alice, password_hash: "${bcrypt.hashSync("alice-pw", 4)}", scopes: [read, write]}`,
      "cert_identities:",
      "  - {subject_cn: svc-writer, scopes: [read, write]}",
    ].join("\n"));
    const oidc = { SERVICE_OIDC_ISSUER: issuer.url, SERVICE_OIDC_AUDIENCE: "hypercache" };
    const tls = { SERVICE_AUTH_CONFIG: policy, SERVICE_API_TLS_CERT: certs.server.cert, SERVICE_API_TLS_KEY: certs.server.key };
    [tlsNode, mtlsNode, plainNode] = await Promise.all([
      startNode({ id: "sdk-tls", env: { ...tls, SERVICE_MAX_VALUE_BYTES: "1KiB" } }),
      startNode({ id: "sdk-mtls", env: { ...tls, SERVICE_API_TLS_CLIENT_CA: certs.ca.cert } }),
      startNode({ id: "sdk-plain", env: { ...oidc, SERVICE_AUTH_CONFIG: policy } }),
    ]);
  });
  after(async () => {
    await Promise.all([tlsNode?.stop(), mtlsNode?.stop(), plainNode?.stop(), issuer?.close()]);
    certs?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const httpsUrl = (n = tlsNode) => `https://127.0.0.1:${n.apiPort}`;
  const make = (o: Partial<ConstructorParameters<typeof HypercacheClient>[0]>, endpoints = [plainNode.api]) => new HypercacheClient({ endpoints, discovery: false, ...o });

  async function identity(c: HypercacheClient): Promise<string> {
    try {
      return (await c.me()).id;
    } finally {
      await c.close();
    }
  }

  it("a static bearer token, and a token provider", async () => {
    expect(await identity(make({ token: "tok-full" }))).to.equal("full");
    expect(await identity(make({ token: async () => "tok-reader" }))).to.equal("reader");
  });

  it("Basic over HTTPS; over plain http refused by the client unless allowInsecureBasic", async () => {
    expect(await identity(make({ basic: { username: "alice", password: "alice-pw" }, tls: { ca: ca() } }, [httpsUrl()]))).to.equal("alice");
    expect(() => make({ basic: { username: "alice", password: "alice-pw" } })).to.throw(ClientConfigError);
    // The server refuses Basic over plaintext too (no allow_basic_without_tls): 401.
    const err = await make({ basic: { username: "alice", password: "alice-pw" }, allowInsecureBasic: true }).me().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnauthorizedError);
  });

  it("a client certificate (mTLS) through @hypercache/client/node", async () => {
    const c = make({ tls: { ca: ca(), cert: certs.pem(certs.clients["svc-writer"]?.cert as string), key: certs.pem(certs.clients["svc-writer"]?.key as string) } }, [httpsUrl(mtlsNode)]);
    expect(await identity(c)).to.equal("svc-writer");
  });

  it("OIDC client credentials: one token for many calls, scopes from the issuer", async () => {
    const before = issuer.tokensIssued;
    const c = make({ oidc: { issuer: issuer.url, clientId: "billing-svc", clientSecret: "s3cret" } });
    try {
      const [me] = await Promise.all([c.me(), c.set("oidc-key", "v"), c.get("oidc-key")]);
      expect(me).to.deep.include({ id: "billing-svc", scopes: ["read", "write"] });
      expect(issuer.tokensIssued - before).to.equal(1);
      const narrowed = make({ oidc: { issuer: issuer.url, clientId: "billing-svc", clientSecret: "s3cret", scope: "read", clientAuth: "post" } });
      expect(await narrowed.set("k", "v").catch((e: unknown) => e)).to.be.instanceOf(ForbiddenError);
      await narrowed.close();
      const wrong = make({ oidc: { issuer: issuer.url, clientId: "billing-svc", clientSecret: "nope" } });
      expect(await wrong.me().catch((e: unknown) => e)).to.be.instanceOf(TokenRequestError).and.have.property("status", 401);
      await wrong.close();
    } finally {
      await c.close();
    }
  });

  it("maps each error code a node answers to its class", async () => {
    const full = make({ token: "tok-full" });
    const reader = make({ token: "tok-reader" });
    const anonymous = make({});
    const wrongBase = make({ token: "tok-full" }, [`${plainNode.api}/not-here`]);
    const small = make({ token: "tok-full", tls: { ca: ca() } }, [httpsUrl()]);
    // A fetch that mislabels JSON bodies, to reach the server's 415.
    const { fetch: nodeFetch, agent } = createNodeFetch();
    const mislabel: FetchLike = (url, init) => nodeFetch(url, { ...init, headers: { ...init.headers, "content-type": "text/plain" } });
    const mislabelled = make({ token: "tok-full", fetch: mislabel });
    try {
      expect(await full.set("k".repeat(5000), "v").catch((e: unknown) => e)).to.be.instanceOf(BadRequestError).and.include({ status: 400, code: "BAD_REQUEST", endpoint: plainNode.api });
      expect(await anonymous.get("k").catch((e: unknown) => e)).to.be.instanceOf(UnauthorizedError).and.include({ status: 401, code: "UNAUTHORIZED" });
      expect(await reader.set("k", "v").catch((e: unknown) => e)).to.be.instanceOf(ForbiddenError).and.include({ status: 403, code: "FORBIDDEN" });
      expect(await anonymous.head("k").catch((e: unknown) => e), "HEAD has no body: the class comes from the status").to.be.instanceOf(UnauthorizedError);
      const nf = (await wrongBase.get("k").catch((e: unknown) => e)) as NotFoundError;
      expect(nf).to.be.instanceOf(NotFoundError).and.include({ status: 404, code: "NOT_FOUND" });
      expect(nf.details).to.deep.include({ route: "unknown" });
      expect(await small.set("big", new Uint8Array(2048)).catch((e: unknown) => e)).to.be.instanceOf(PayloadTooLargeError).and.include({ status: 413 });
      expect(await mislabelled.deleteMany(["a"]).then((r) => r[0]?.error)).to.be.instanceOf(UnsupportedMediaTypeError).and.include({ status: 415 });
      await fetch(`${plainNode.mgmt}/dist/drain`, { method: "POST", headers: { authorization: "Bearer tok-full" } });
      const drained = (await full.set("k", "v").catch((e: unknown) => e)) as AllEndpointsFailedError;
      expect(drained).to.be.instanceOf(AllEndpointsFailedError);
      expect(drained.attempts[0]?.error).to.be.instanceOf(DrainingError).and.include({ status: 503, code: "DRAINING", endpoint: plainNode.api });
    } finally {
      await Promise.all([full, reader, anonymous, wrongBase, small, mislabelled].map((c) => c.close()));
      await agent.close();
    }
  });

  it("maps the 429 past the failed-authentication limit of an address (10 a second) to TooManyRequestsError", async () => {
    const wrong = make({ token: "not-a-token" });
    try {
      const errors = await Promise.all(Array.from({ length: 40 }, () => wrong.me().catch((e: unknown) => e)));
      expect(errors.every((e) => e instanceof UnauthorizedError || e instanceof TooManyRequestsError), "401 up to the limit, 429 past it").to.equal(true);
      expect(errors.find((e) => e instanceof TooManyRequestsError)).to.include({ status: 429, code: "TOO_MANY_REQUESTS", endpoint: plainNode.api });
    } finally {
      await wrong.close();
    }
  });
});
