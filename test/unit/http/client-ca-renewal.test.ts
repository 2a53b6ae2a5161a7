// ClientCaRenewal decides which connections of the client API must end after a reload: those
// accepted before the client CA last changed. A renewed server certificate with the same CA ends
// nothing; a changed CA closes the idle connections and marks the older ones.
import { EventEmitter } from "node:events";
import type https from "node:https";
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

  it("a renewed server certificate under the same CA is used for new handshakes and ends no connection", () => {
    const before = {};
    server.emit("secureConnection", before);
    renewal.apply(material("ca-1", "cert-2"));
    expect(server.contexts).to.have.length(1);
    expect(server.idleClosed).to.equal(0);
    expect(renewal.endsConnection(before)).to.equal(false);
  });

  it("a changed CA closes the idle connections and ends every connection accepted before it, not those after", () => {
    const before = {};
    server.emit("secureConnection", before);
    renewal.apply(material("ca-2"));
    const after = {};
    server.emit("secureConnection", after);
    expect(server.idleClosed).to.equal(1);
    expect(renewal.endsConnection(before)).to.equal(true);
    expect(renewal.endsConnection(after)).to.equal(false);
    expect(renewal.endsConnection(null)).to.equal(false);

    // A second change makes the connections of the first one old too.
    renewal.apply(material("ca-3"));
    expect(renewal.endsConnection(after)).to.equal(true);
    expect(server.idleClosed).to.equal(2);
    // The same bytes again change nothing.
    renewal.apply(material("ca-3", "cert-4"));
    expect(server.idleClosed).to.equal(2);
  });

  it("applying before the listener is attached is a programming error", () => {
    expect(() => new ClientCaRenewal(undefined).apply(material(undefined))).to.throw(/before attach/);
  });
});
