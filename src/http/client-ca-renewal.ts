// A reloaded client CA (SERVICE_API_TLS_CLIENT_CA) reaches new handshakes through
// setSecureContext, but a TLS connection is verified once, at its handshake: a client whose CA an
// operator removed kept its keep-alive connection, and every request on it was still taken under
// the old CA (mTLS identities read the verification once per connection, client-cert.ts). When the
// CA bytes change, the connections accepted before end without an answer being cut: idle ones at
// once, one whose handshake was still under way when it ends, and the next answer on any other
// says `Connection: close` and ends it. So at most one request per connection is answered under
// the old CA after the reload. A renewed server certificate alone ends nothing: it changes no
// one's trust.
import type https from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { sameCa, type TlsMaterial } from "../config/index.js";
import { ConnectionEpochs } from "./connection-epochs.js";

export class ClientCaRenewal {
  private readonly epochs = new ConnectionEpochs();
  private server: https.Server | undefined;

  constructor(private current: Buffer | undefined) {}

  /** The client CA in use. */
  get ca(): Buffer | undefined {
    return this.current;
  }

  /** The listener whose connections this renews (createListenerServer calls it). */
  attach(server: https.Server): void {
    this.server = server;
    server.on("connection", (socket: Socket) => this.epochs.accepted(socket));
    // A handshake that began before the change was checked against the old CA: it ends at once,
    // before the HTTP server reads from it (prepended: the request that came with the client's
    // last handshake flight was otherwise handled, only its answer lost).
    server.prependListener("secureConnection", (socket: TLSSocket) => {
      if (this.epochs.isOlder(socket)) socket.destroy();
    });
  }

  /** True when an answer on `socket` must end it: the connection was verified under an older CA. */
  readonly endsConnection = (socket: Socket | null): boolean => this.epochs.isOlder(socket);

  /** Uses `material` for new handshakes; when its CA differs, ends the connections of the old one. */
  apply(material: TlsMaterial): void {
    const server = this.server;
    if (server === undefined) throw new Error("ClientCaRenewal.apply before attach");
    server.setSecureContext(material);
    const same = sameCa(material.ca, this.current);
    this.current = material.ca;
    if (same) return;
    this.epochs.advance();
    server.closeIdleConnections();
  }
}
