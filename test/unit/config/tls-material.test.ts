import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { checkPeerCredential, loadConfig, readTlsMaterial, SettingError, sharedCaSubject, TlsMaterialError } from "../../../src/config/index.js";
import { makeTestCerts, type TestCerts } from "../../helpers/certs.js";

describe("config/tls-material checkPeerCredential", () => {
  let certs: TestCerts;
  before(() => {
    certs = makeTestCerts(["c"]);
  });
  after(() => certs.cleanup());
  const pem = (p: string) => certs.pem(p);

  it("finds a certificate two bundles share, in any position", () => {
    const bundle = Buffer.concat([pem(certs.foreignCa.cert), pem(certs.ca.cert)]);
    expect(sharedCaSubject(pem(certs.ca.cert), bundle)).to.equal("CN=hypercache test CA");
    expect(sharedCaSubject(bundle, pem(certs.foreignCa.cert))).to.equal("CN=some other CA");
    expect(sharedCaSubject(pem(certs.ca.cert), pem(certs.foreignCa.cert))).to.equal(undefined);
  });

  it("finds a CA the other bundle holds under another certificate: renewed with the same key (a new fingerprint), or one that issued a CA of the other bundle", () => {
    const run = (args: string[]) => execFileSync("openssl", args, { cwd: certs.dir, stdio: ["ignore", "ignore", "pipe"] });
    // The same CA renewed: same key and subject, new validity, so a new certificate and fingerprint.
    run(["req", "-x509", "-new", "-key", certs.ca.key, "-out", "ca-renewed.crt", "-days", "3", "-subj", "/CN=hypercache test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
    const renewed = pem(join(certs.dir, "ca-renewed.crt"));
    expect(renewed.equals(pem(certs.ca.cert)), "another certificate").to.equal(false);
    expect(sharedCaSubject(pem(certs.ca.cert), renewed)).to.equal("CN=hypercache test CA");
    expect(() => checkPeerCredential(undefined, pem(certs.ca.cert), renewed)).to.throw(TlsMaterialError);
    // An intermediate CA the test CA issued (with its own key): its clients chain to the test CA.
    run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "inter.key"]);
    run(["req", "-new", "-key", "inter.key", "-out", "inter.csr", "-subj", "/CN=clients intermediate"]);
    writeFileSync(join(certs.dir, "inter.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
    run(["x509", "-req", "-in", "inter.csr", "-CA", certs.ca.cert, "-CAkey", certs.ca.key, "-set_serial", "0x1234", "-days", "2", "-out", "inter.crt", "-extfile", "inter.ext"]);
    const intermediate = pem(join(certs.dir, "inter.crt"));
    expect(sharedCaSubject(intermediate, pem(certs.ca.cert)), "client CA issued by the peer CA").to.not.equal(undefined);
    expect(sharedCaSubject(pem(certs.ca.cert), intermediate), "peer CA issued by the client CA").to.not.equal(undefined);
    expect(sharedCaSubject(intermediate, pem(certs.foreignCa.cert)), "unrelated").to.equal(undefined);
  });

  it("refuses a peer CA shared with the client API's CA when no peer token is set", () => {
    expect(() => checkPeerCredential(undefined, pem(certs.ca.cert), pem(certs.ca.cert))).to.throw(TlsMaterialError, /SERVICE_DIST_TLS_CA shares .*SERVICE_API_TLS_CLIENT_CA .*SERVICE_PEER_TOKEN/);
    expect(() => checkPeerCredential("", pem(certs.ca.cert), pem(certs.ca.cert))).to.throw(TlsMaterialError);
  });

  it("lets the rest through: a peer token, separate CAs, or one of the two CAs missing", () => {
    checkPeerCredential("peer-token", pem(certs.ca.cert), pem(certs.ca.cert));
    checkPeerCredential(undefined, pem(certs.foreignCa.cert), pem(certs.ca.cert));
    checkPeerCredential(undefined, undefined, pem(certs.ca.cert));
    checkPeerCredential(undefined, pem(certs.ca.cert), undefined);
  });
});

describe("config/tls-material readTlsMaterial", () => {
  let certs: TestCerts;
  before(() => {
    certs = makeTestCerts(["c"]);
  });
  after(() => certs.cleanup());

  it("reads certificate, key and CA", () => {
    const m = readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: certs.ca.cert }, "api", Date.now());
    expect(m.cert.toString()).to.contain("BEGIN CERTIFICATE");
    expect(m.key.toString()).to.contain("PRIVATE KEY");
    expect(m.ca?.toString()).to.contain("BEGIN CERTIFICATE");
  });

  it("a missing file names the variable and the path", () => {
    expect(() => readTlsMaterial({ certFile: "/nope.crt", keyFile: certs.server.key, caFile: undefined }, "api", Date.now())).to.throw(TlsMaterialError, "SERVICE_API_TLS_CERT: cannot read /nope.crt");
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: "/nope.key", caFile: undefined }, "mgmt", Date.now())).to.throw(TlsMaterialError, "SERVICE_MGMT_TLS_KEY");
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: "/nope-ca.pem" }, "dist", Date.now())).to.throw(TlsMaterialError, "SERVICE_DIST_TLS_CA");
  });

  it("a CA bundle without any certificate is refused (Node would ignore it silently)", () => {
    const notPem = `${certs.dir}/not-a-ca.pem`;
    writeFileSync(notPem, "not a certificate");
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: notPem }, "dist", Date.now())).to.throw(TlsMaterialError, "SERVICE_DIST_TLS_CA: no PEM certificate");
    const broken = `${certs.dir}/broken-ca.pem`;
    writeFileSync(broken, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: broken }, "api", Date.now())).to.throw(TlsMaterialError, "SERVICE_API_TLS_CLIENT_CA: unusable certificate");
  });

  it("an expired certificate, or one not valid yet, is refused (it was taken, at boot and on reload, and every peer handshake then failed)", () => {
    const files = { certFile: certs.server.cert, keyFile: certs.server.key, caFile: certs.ca.cert };
    const day = 86_400_000;
    expect(() => readTlsMaterial(files, "api", Date.now() + 3 * day)).to.throw(TlsMaterialError, /SERVICE_API_TLS_CERT: the certificate expired at \d{4}-/);
    expect(() => readTlsMaterial(files, "dist", Date.now() + 3 * day)).to.throw(TlsMaterialError, /SERVICE_DIST_TLS_CERT: the certificate expired/);
    expect(() => readTlsMaterial(files, "mgmt", Date.now() - day)).to.throw(TlsMaterialError, /SERVICE_MGMT_TLS_CERT: the certificate is valid only from \d{4}-/);
    expect(readTlsMaterial(files, "api", Date.now() - 60_000).cert.length, "a minute early: within the leeway").to.be.above(0);
  });

  it("a peer certificate that does not chain to SERVICE_DIST_TLS_CA is refused: peers verifying with that CA would refuse it", () => {
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: certs.foreignCa.cert }, "dist", Date.now())).to.throw(
      TlsMaterialError,
      /SERVICE_DIST_TLS_CERT: the certificate does not chain to a CA of SERVICE_DIST_TLS_CA/,
    );
    // The client CA of the API listener verifies clients, not the node's own certificate.
    expect(readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.server.key, caFile: certs.foreignCa.cert }, "api", Date.now()).ca).to.not.equal(undefined);
  });

  it("a key that does not belong to the certificate, or a file that is not PEM, is refused at once", () => {
    expect(() => readTlsMaterial({ certFile: certs.server.cert, keyFile: certs.clients.c!.key, caFile: undefined }, "api", Date.now())).to.throw(TlsMaterialError, "unusable");
    expect(() => readTlsMaterial({ certFile: certs.server.key, keyFile: certs.server.key, caFile: undefined }, "api", Date.now())).to.throw(TlsMaterialError, "unusable");
  });
});

describe("config: the peer transport's TLS is mutual", () => {
  it("SERVICE_DIST_TLS_CERT and _KEY without SERVICE_DIST_TLS_CA is a setting error naming the CA", () => {
    let caught: unknown;
    try {
      loadConfig({ SERVICE_DIST_TLS_CERT: "/c.pem", SERVICE_DIST_TLS_KEY: "/k.pem" }, { hostname: "h" });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(SettingError);
    expect((caught as SettingError).variable).to.equal("SERVICE_DIST_TLS_CA");
  });

  it("with the CA it is accepted", () => {
    const c = loadConfig({ SERVICE_DIST_TLS_CERT: "/c.pem", SERVICE_DIST_TLS_KEY: "/k.pem", SERVICE_DIST_TLS_CA: "/ca.pem" }, { hostname: "h" });
    expect(c.distTls).to.deep.equal({ certFile: "/c.pem", keyFile: "/k.pem", caFile: "/ca.pem" });
  });
});
