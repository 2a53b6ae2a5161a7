// Boot failures of the auth and TLS configuration on the real binary: each one exits non-zero
// with one clear error record (a JSON log record, or for a bad setting one stderr line) and never
// falls back to an open API. Exit codes: 2 for configuration errors (settings, policy file, TLS
// files), 1 for an OIDC issuer that cannot be used at boot. The processes start together in
// before() and each test checks one outcome, so the file stays fast.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { freePort } from "../helpers/ports.js";
import { startNode, type LogRecord } from "../helpers/node-process.js";

interface Outcome {
  code: number | string;
  errors: LogRecord[];
  stderr: string;
  listening: boolean;
}

/** Starts the binary with `env` and waits for it to exit (killed after 20 s: a hang fails the test). */
async function boot(env: Record<string, string>): Promise<Outcome> {
  const node = await startNode({ id: "boot-fail", env, readyMessage: false });
  const timeout = setTimeout(() => node.child.kill("SIGKILL"), 20_000);
  const code = await node.exited;
  clearTimeout(timeout);
  return {
    code,
    errors: node.logs.filter((r) => r.level === "error"),
    stderr: node.stderr.join(""),
    listening: node.logs.some((r) => r.message === "client API listener started" || r.message === "dist HTTP listener started"),
  };
}

/** Exactly one error record with this message, the process gone with `code`, no listener ever bound. */
function expectRecord(o: Outcome, code: number, message: string, ...fragments: string[]): void {
  expect(o.code, JSON.stringify(o)).to.equal(code);
  expect(o.errors.map((r) => r.message), JSON.stringify(o)).to.deep.equal([message]);
  for (const f of fragments) expect(String(o.errors[0]?.error)).to.contain(f);
  expect(o.listening).to.equal(false);
}

/** A setting error: exit 2 with one stderr line naming the variable. */
function expectSettingError(o: Outcome, variable: string): void {
  expect(o.code, JSON.stringify(o)).to.equal(2);
  expect(o.stderr.trim().split("\n")).to.have.length(1);
  expect(o.stderr).to.contain("invalid configuration").and.contain(variable);
  expect(o.listening).to.equal(false);
}

/** Processes booted concurrently. */
const BOOTS_AT_ONCE = 6;

describe("auth: boot failures of the real binary", function () {
  // Seventeen processes boot and exit; on a slow machine that can take longer than one test's timeout.
  this.timeout(60_000);
  let dir: string;
  let certs: TestCerts;
  let down: http.Server;
  const outcomes = new Map<string, Promise<Outcome>>();
  const outcome = (name: string) => outcomes.get(name) as Promise<Outcome>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-boot-"));
    certs = makeTestCerts(["c"]);
    const file = (name: string, text: string) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    down = http.createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => down.listen(0, "127.0.0.1", r));
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const server = { SERVICE_API_TLS_CERT: certs.server.cert, SERVICE_API_TLS_KEY: certs.server.key };
    // The test CA renewed: the same key and subject in a new certificate (a new fingerprint).
    const renewedCa = () => {
      const out = join(dir, "ca-renewed.crt");
      execFileSync("openssl", ["req", "-x509", "-new", "-key", certs.ca.key, "-out", out, "-days", "3", "-subj", "/CN=hypercache test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], { stdio: ["ignore", "ignore", "pipe"] });
      return out;
    };
    // A certificate that expired (made under faketime, valid for a day in 2020).
    const expired = () => {
      const out = join(dir, "expired.crt");
      execFileSync("faketime", ["2020-01-01 00:00:00", "openssl", "req", "-x509", "-new", "-key", certs.server.key, "-out", out, "-days", "1", "-subj", "/CN=localhost"], { stdio: ["ignore", "ignore", "pipe"] });
      return out;
    };
    const cases: Record<string, Record<string, string>> = {
      "policy missing": { SERVICE_AUTH_CONFIG: join(dir, "absent.yaml") },
      "policy bad yaml": { SERVICE_AUTH_CONFIG: file("bad.yaml", "tokens: [ {id: a, token: b") },
      "policy bad json": { SERVICE_AUTH_CONFIG: file("bad.json", '{"tokens": [}') },
      "policy unknown scope": { SERVICE_AUTH_CONFIG: file("scope.yaml", "tokens:\n  - {id: a, token: b, scopes: [read, superuser]}\n") },
      "policy bad hash": { SERVICE_AUTH_CONFIG: file("users.yaml", "users:\n  - {username: a, password_hash: hunter2, scopes: [read]}\n") },
      "policy missing with token": { SERVICE_AUTH_CONFIG: join(dir, "absent.yaml"), SERVICE_AUTH_TOKEN: "t" },
      "issuer without audience": { SERVICE_OIDC_ISSUER: "http://127.0.0.1:1" },
      "audience without issuer": { SERVICE_OIDC_AUDIENCE: "cache" },
      "issuer unreachable": { SERVICE_OIDC_ISSUER: unreachable, SERVICE_OIDC_AUDIENCE: "cache" },
      "issuer 503": { SERVICE_OIDC_ISSUER: `http://127.0.0.1:${(down.address() as AddressInfo).port}`, SERVICE_OIDC_AUDIENCE: "cache" },
      "api cert without key": { SERVICE_API_TLS_CERT: certs.server.cert },
      "mgmt cert without key": { SERVICE_MGMT_TLS_CERT: certs.server.cert },
      "client ca without cert": { SERVICE_API_TLS_CLIENT_CA: certs.ca.cert },
      "dist tls without ca": { SERVICE_DIST_TLS_CERT: certs.server.cert, SERVICE_DIST_TLS_KEY: certs.server.key },
      "cert file missing": { ...server, SERVICE_API_TLS_CERT: join(dir, "nope.crt") },
      "key mismatch": { SERVICE_MGMT_TLS_CERT: certs.server.cert, SERVICE_MGMT_TLS_KEY: certs.clients.c!.key },
      "expired cert": { ...server, SERVICE_API_TLS_CERT: expired() },
      "peer ca is the client ca, no peer token": {
        ...server,
        SERVICE_API_TLS_CLIENT_CA: certs.ca.cert,
        SERVICE_DIST_TLS_CERT: certs.server.cert,
        SERVICE_DIST_TLS_KEY: certs.server.key,
        SERVICE_DIST_TLS_CA: file("bundle.crt", `${readFileSync(certs.foreignCa.cert, "utf8")}${readFileSync(certs.ca.cert, "utf8")}`),
      },
      "peer ca is the client ca renewed, no peer token": {
        ...server,
        SERVICE_API_TLS_CLIENT_CA: certs.ca.cert,
        SERVICE_DIST_TLS_CERT: certs.server.cert,
        SERVICE_DIST_TLS_KEY: certs.server.key,
        SERVICE_DIST_TLS_CA: renewedCa(),
      },
      "dist ca not pem": { SERVICE_DIST_TLS_CERT: certs.server.cert, SERVICE_DIST_TLS_KEY: certs.server.key, SERVICE_DIST_TLS_CA: file("ca.txt", "not a certificate") },
    };
    // At most BOOTS_AT_ONCE processes at a time, so a small CI machine is not swamped.
    const lanes: Array<Promise<unknown>> = Array.from({ length: BOOTS_AT_ONCE }, () => Promise.resolve());
    Object.entries(cases).forEach(([name, env], i) => {
      const lane = i % BOOTS_AT_ONCE;
      const p = (lanes[lane] as Promise<unknown>).then(() => boot(env));
      lanes[lane] = p.catch(() => undefined);
      outcomes.set(name, p);
    });
  });
  after(async () => {
    await Promise.allSettled(outcomes.values());
    down?.close();
    rmSync(dir, { recursive: true, force: true });
    certs?.cleanup();
  });

  describe("policy file (exit 2, record `auth policy file invalid`)", () => {
    it("missing", async () => {
      expectRecord(await outcome("policy missing"), 2, "auth policy file invalid", "absent.yaml", "no such file");
    });

    it("malformed YAML", async () => {
      expectRecord(await outcome("policy bad yaml"), 2, "auth policy file invalid", "not valid YAML or JSON");
    });

    it("malformed JSON", async () => {
      expectRecord(await outcome("policy bad json"), 2, "auth policy file invalid", "not valid YAML or JSON");
    });

    it("an unknown scope name", async () => {
      expectRecord(await outcome("policy unknown scope"), 2, "auth policy file invalid", "tokens[0].scopes[1]", 'unknown scope "superuser"');
    });

    it("a user whose password is not a bcrypt hash", async () => {
      expectRecord(await outcome("policy bad hash"), 2, "auth policy file invalid", "bcrypt");
    });

    it("even with SERVICE_AUTH_TOKEN set (no fallback to the token)", async () => {
      expectRecord(await outcome("policy missing with token"), 2, "auth policy file invalid");
    });
  });

  describe("OIDC", () => {
    it("an issuer without an audience is a setting error (exit 2)", async () => {
      expectSettingError(await outcome("issuer without audience"), "SERVICE_OIDC_AUDIENCE");
    });

    it("an audience without an issuer is a setting error (exit 2)", async () => {
      expectSettingError(await outcome("audience without issuer"), "SERVICE_OIDC_ISSUER");
    });

    it("an unreachable issuer: exit 1 with `oidc verifier construction failed`", async () => {
      expectRecord(await outcome("issuer unreachable"), 1, "oidc verifier construction failed", "discovery document");
    });

    it("an issuer answering 503: exit 1 with `oidc verifier construction failed`", async () => {
      expectRecord(await outcome("issuer 503"), 1, "oidc verifier construction failed", "503");
    });
  });

  describe("TLS", () => {
    it("a certificate without a key is a setting error (exit 2)", async () => {
      expectSettingError(await outcome("api cert without key"), "SERVICE_API_TLS_KEY");
      expectSettingError(await outcome("mgmt cert without key"), "SERVICE_MGMT_TLS_KEY");
    });

    it("a client CA without a certificate is a setting error (exit 2)", async () => {
      expectSettingError(await outcome("client ca without cert"), "SERVICE_API_TLS_CLIENT_CA");
    });

    it("peer TLS without a CA is a setting error (exit 2): every node verifies every peer", async () => {
      expectSettingError(await outcome("dist tls without ca"), "SERVICE_DIST_TLS_CA");
    });

    it("a certificate file that does not exist: exit 2 with `tls configuration invalid`", async () => {
      expectRecord(await outcome("cert file missing"), 2, "tls configuration invalid", "SERVICE_API_TLS_CERT", "nope.crt");
    });

    it("an expired certificate: exit 2 with `tls configuration invalid` saying when it expired (it was served, and every client refused it)", async () => {
      expectRecord(await outcome("expired cert"), 2, "tls configuration invalid", "SERVICE_API_TLS_CERT", "expired at 2020-01-02");
    });

    it("a key that does not belong to the certificate: exit 2 with `tls configuration invalid`", async () => {
      expectRecord(await outcome("key mismatch"), 2, "tls configuration invalid", "SERVICE_MGMT_TLS_CERT");
    });

    it("a peer CA bundle sharing a certificate with the client API's CA, without a peer token: exit 2 (every client certificate would be a peer credential)", async () => {
      expectRecord(await outcome("peer ca is the client ca, no peer token"), 2, "tls configuration invalid", "SERVICE_DIST_TLS_CA", "SERVICE_API_TLS_CLIENT_CA", "SERVICE_PEER_TOKEN");
    });

    it("a peer CA bundle holding the client API's CA renewed with its key (another certificate, another fingerprint), without a peer token: exit 2 (it started, and a client certificate read and drained through the dist listener)", async () => {
      expectRecord(await outcome("peer ca is the client ca renewed, no peer token"), 2, "tls configuration invalid", "SERVICE_DIST_TLS_CA", "SERVICE_API_TLS_CLIENT_CA", "SERVICE_PEER_TOKEN");
    });

    it("a peer CA file without a certificate: exit 2 with `tls configuration invalid`", async () => {
      expectRecord(await outcome("dist ca not pem"), 2, "tls configuration invalid", "SERVICE_DIST_TLS_CA");
    });
  });
});
