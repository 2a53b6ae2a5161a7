// The peer client after a TLS reload: a session it opens to a peer it already knows presents the
// reloaded certificate. Before, the client copied the TLS options once per peer address, when it
// first met the peer, and every later session (after an idle close or a reset) presented the old
// certificate: a renewal reached only peers first contacted after it (review finding).
import { expect } from "chai";
import { X509Certificate } from "node:crypto";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { ConnectPeerTransport, livePeerTls } from "../../src/peer/index.js";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";

describe("peer client: sessions after a TLS reload", function () {
  this.timeout(30_000);
  let a: TestCerts;
  let b: TestCerts;
  before(() => {
    a = makeTestCerts(["client"]);
    b = makeTestCerts(["client"]);
  });
  after(() => {
    a?.cleanup();
    b?.cleanup();
  });

  it("a new session to a peer met before the reload presents the reloaded certificate", async () => {
    const seen: string[] = [];
    // A peer that trusts both CAs, notes each session's client certificate and closes the session.
    const server = http2.createSecureServer({ cert: a.pem(a.server.cert), key: a.pem(a.server.key), ca: [a.pem(a.ca.cert), b.pem(b.ca.cert)], requestCert: true, rejectUnauthorized: true });
    server.on("secureConnection", (socket: TLSSocket) => {
      seen.push(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const material = (c: TestCerts) => ({ ca: Buffer.concat([a.pem(a.ca.cert), c.pem(c.ca.cert)]), cert: c.pem(c.clients.client!.cert), key: c.pem(c.clients.client!.key) });
    const live = livePeerTls(material(a));
    const transport = new ConnectPeerTransport({ compressionThresholdBytes: 0, tls: live.options, timeoutMs: 2_000 });
    const peer = { id: "p", address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
    try {
      await transport.health(peer).catch(() => undefined);
      live.replace(material(b));
      await transport.health(peer).catch(() => undefined);
      const fingerprint = (c: TestCerts) => new X509Certificate(c.pem(c.clients.client!.cert)).fingerprint256;
      expect(seen[0], "the first session").to.equal(fingerprint(a));
      expect(seen.length, "a second session was opened").to.be.at.least(2);
      // Before: the second session presented certificate A again.
      expect(seen[seen.length - 1], "the session after the reload").to.equal(fingerprint(b));
    } finally {
      await transport.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
