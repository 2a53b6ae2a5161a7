// A real node with mutual TLS on the client listener: a listed client certificate never rescues a
// wrong Basic password or a wrong bearer token that comes with it. The wrong credential is 401
// and counts against the address's failure limit (429 past it), so passwords cannot be guessed
// without limit behind a certificate, and /v1/me does not tell a right guess from a wrong one.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { expectUnauthorized } from "../helpers/auth-expect.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { basic, bearer, call, type CallOptions } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const FAIL_LIMIT = 3;

describe("auth: a wrong credential with a listed client certificate (real node, mutual TLS)", () => {
  let certs: TestCerts;
  let dir: string;
  let node: NodeProcess;
  const me = () => `https://127.0.0.1:${node.apiPort}/v1/me`;
  const withCert = (): CallOptions["tls"] => ({
    ca: certs.pem(certs.ca.cert),
    cert: certs.pem(certs.clients["svc-billing"]!.cert),
    key: certs.pem(certs.clients["svc-billing"]!.key),
  });

  before(async () => {
    certs = makeTestCerts(["svc-billing"]);
    dir = mkdtempSync(join(tmpdir(), "hypercache-mtls-cred-"));
    writeFileSync(
      join(dir, "auth.yaml"),
      [
        "cert_identities:",
        "  - {subject_cn: svc-billing, scopes: [read]}",
        "tokens:",
        "  - {id: full, token: tok-full, scopes: [read, write, admin]}",
        "users:",
        `  - {username: alice, password_hash: "${bcrypt.hashSync("alice-password", 4)}", scopes: [read]}`,
      ].join("\n"),
    );
    node = await startNode({
      id: "auth-mtls-cred",
      env: {
        SERVICE_AUTH_CONFIG: join(dir, "auth.yaml"),
        SERVICE_API_TLS_CERT: certs.server.cert,
        SERVICE_API_TLS_KEY: certs.server.key,
        SERVICE_API_TLS_CLIENT_CA: certs.ca.cert,
        SERVICE_AUTH_FAIL_LIMIT: String(FAIL_LIMIT),
      },
    });
  });
  after(async () => {
    await node?.stop("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
    certs?.cleanup();
  });

  it("answers 401 to a wrong Basic password and to a wrong bearer token, not the certificate's 200", async () => {
    expectUnauthorized(await call(me(), { headers: basic("alice", "wrong"), tls: withCert() }), "wrong Basic");
    expectUnauthorized(await call(me(), { headers: bearer("wrong"), tls: withCert() }), "wrong bearer");
  });

  it("still answers the right credential's identity, and the certificate's without a credential", async () => {
    await new Promise((r) => setTimeout(r, 1100)); // a fresh failure window for this address
    expect((await call(me(), { headers: basic("alice", "alice-password"), tls: withCert() })).json()).to.include({ id: "alice" });
    expect((await call(me(), { headers: bearer("tok-full"), tls: withCert() })).json()).to.include({ id: "full" });
    expect((await call(me(), { tls: withCert() })).json()).to.include({ id: "svc-billing" });
  });

  it("counts wrong passwords sent with the certificate: past SERVICE_AUTH_FAIL_LIMIT they are 429", async () => {
    await new Promise((r) => setTimeout(r, 1100));
    const statuses: number[] = [];
    for (let i = 0; i < 3 * FAIL_LIMIT; i++) statuses.push((await call(me(), { headers: basic("alice", `guess-${i}`), tls: withCert() })).status);
    expect(statuses.every((s) => s === 401 || s === 429), statuses.join(",")).to.equal(true);
    expect(statuses.filter((s) => s === 429).length, statuses.join(",")).to.be.greaterThan(0);
  });
});
