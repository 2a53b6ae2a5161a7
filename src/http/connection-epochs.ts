// Which connections were accepted before the last change of what they were verified against (a
// reloaded CA): a connection is verified once, at its handshake. Connections are recorded only
// after a first change, so a listener whose CA never changes pays nothing per connection.
export class ConnectionEpochs {
  private epoch = 0;
  private readonly acceptedIn = new WeakMap<object, number>();

  /** True once a change happened. */
  get changed(): boolean {
    return this.epoch > 0;
  }

  /** Records a connection (TLS socket or HTTP/2 session) as it is accepted. */
  accepted(connection: object): void {
    if (this.epoch > 0) this.acceptedIn.set(connection, this.epoch);
  }

  /** A change: every connection accepted until now is older. */
  advance(): void {
    this.epoch++;
  }

  /** True for a connection accepted before the last change. */
  isOlder(connection: object): boolean {
    return this.epoch > 0 && (this.acceptedIn.get(connection) ?? 0) < this.epoch;
  }
}
