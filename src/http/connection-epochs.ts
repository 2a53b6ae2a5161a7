// Which connections were accepted before the last change of what they were verified against (a
// reloaded CA): a connection is verified once, at its handshake. Its age counts from the TCP
// accept, not from the end of its handshake: the certificate is checked against the context the
// handshake began with, and a client can hold its handshake back across a change (a review held
// one for seconds and kept answers coming under a removed CA). Connections are recorded only
// after a first change, so a listener whose CA never changes pays nothing per connection.
import type { Socket } from "node:net";
import { acceptedSocketOf } from "./connection-rank.js";

export class ConnectionEpochs {
  private epoch = 0;
  private readonly acceptedIn = new WeakMap<object, number>();

  /** Records a TCP connection as the listener accepts it (its 'connection' event). */
  accepted(socket: Socket): void {
    if (this.epoch > 0) this.acceptedIn.set(socket, this.epoch);
  }

  /** A change: every connection accepted until now is older. */
  advance(): void {
    this.epoch++;
  }

  /**
   * True for a connection accepted before the last change; a TLS socket is looked up by the TCP
   * socket under it. A socket with none (handed to the server some other way than its own accept)
   * and never recorded is taken as new rather than ended at once.
   */
  isOlder(socket: Socket | null | undefined): boolean {
    if (this.epoch === 0 || socket == null) return false;
    const accepted = acceptedSocketOf(socket);
    if (accepted === undefined && !this.acceptedIn.has(socket)) return false;
    return (this.acceptedIn.get(accepted ?? socket) ?? 0) < this.epoch;
  }
}
