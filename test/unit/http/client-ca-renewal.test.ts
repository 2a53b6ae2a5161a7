// ClientCaRenewal decides which connections of the client API must end after a reload: those
// accepted (TCP) before the client CA last changed. A renewed server certificate with the same CA ends
// nothing; a changed CA closes the idle connections and marks the older ones.
import { EventEmitter } from "node:events";
import type https from "node:https";
import type { Socket } from "node:net";
import { expect } from "chai";
import { ClientCaRenewal } from "../../../src/http/client-ca-renewal.js";
import type { TlsMaterial } from "../../../src/config/index.js";

class FakeServer extends EventEmitter {
  contexts: TlsMaterial[] = [];
  idleClosed = 0;
  setSecureContext(m: TlsMaterial): void {
    this.contexts.push(m);
  }
  closeIdleConnections(): void {
    this.idleClosed++;
  }
}

const material = (ca: string | undefined, cert = "cert"): TlsMaterial => ({ cert: Buffer.from(cert), key: Buffer.from("key"), ca: ca === undefined ? undefined : Buffer.from(ca) });

describe("http/client-ca-renewal", () => {
  let server: FakeServer;
  let renewal: ClientCaRenewal;
  beforeEach(() => {
    server = new FakeServer();
    renewal = new ClientCaRenewal(Buffer.from("ca-1"));
    renewal.attach(server as unknown as https.Server);
  });

  /** A TCP connection accepted now, and the TLS socket over it once its handshake is done. */
  const accept = () => {
    const raw = {} as Socket;
    server.emit("connection", raw);
    let destroyed = false;
    const tls = { _parent: raw, destroy: () => void (destroyed = true) } as unknown as Socket;
    return { raw, tls, secure: () => server.emit("secureConnection", tls), destroyed: () => destroyed };
  };

  it("a renewed server certificate under the same CA is used for new handshakes and ends no connection", () => {
    const before = accept();
    before.secure();
    renewal.apply(material("ca-1", "cert-2"));
    expect(server.contexts).to.have.length(1);
    expect(server.idleClosed).to.equal(0);
    expect(renewal.endsConnection(before.tls)).to.equal(false);
  });

  it("a changed CA closes the idle connections and ends every connection accepted before it, not those after", () => {
    const before = accept();
    before.secure();
    renewal.apply(material("ca-2"));
    const after = accept();
    after.secure();
    expect(server.idleClosed).to.equal(1);
    expect(renewal.endsConnection(before.tls)).to.equal(true);
    expect(renewal.endsConnection(after.tls)).to.equal(false);
    expect(after.destroyed()).to.equal(false);
    expect(renewal.endsConnection(null)).to.equal(false);

    // A second change makes the connections of the first one old too.
    renewal.apply(material("ca-3"));
    expect(renewal.endsConnection(after.tls)).to.equal(true);
    expect(server.idleClosed).to.equal(2);
    // The same bytes again change nothing.
    renewal.apply(material("ca-3", "cert-4"));
    expect(server.idleClosed).to.equal(2);
  });

  it("a handshake under way at the change (checked against the old CA) ends as it completes: age counts from the TCP accept", () => {
    const held = accept();
    renewal.apply(material("ca-2"));
    held.secure();
    expect(held.destroyed(), "the connection whose handshake spanned the change").to.equal(true);
    const fresh = accept();
    fresh.secure();
    expect(fresh.destroyed()).to.equal(false);
  });

  it("a socket with no TCP socket under it that was never seen accepted is taken as new, not ended", () => {
    renewal.apply(material("ca-2"));
    const handed = { destroy: () => undefined } as unknown as Socket;
    expect(renewal.endsConnection(handed)).to.equal(false);
  });

  it("applying before the listener is attached is a programming error", () => {
    expect(() => new ClientCaRenewal(undefined).apply(material(undefined))).to.throw(/before attach/);
  });
});
