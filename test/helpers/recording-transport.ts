// A fake PeerTransport for unit tests of the push paths (hints, read repair, migrations): it
// records every Set and Remove call, can hold calls until the test releases them, and can fail
// chosen calls. Only set and remove exist; anything else throws when called.
import type { VersionedRecord } from "../../src/store/index.js";
import type { ApplyOutcome, PeerRef, PeerTransport } from "../../src/transport/index.js";

export interface SentCall {
  readonly kind: "set" | "remove";
  readonly to: string;
  readonly from: string;
  readonly records: VersionedRecord[];
}

export class RecordingTransport {
  /** Calls in the order they were made. */
  readonly sent: SentCall[] = [];
  /** Calls that completed successfully, in completion order. */
  readonly delivered: SentCall[] = [];
  /** Decides per call whether it fails: a returned value is thrown. */
  fail: (call: SentCall) => unknown = () => undefined;
  /** While true, new calls wait until release(). */
  hold = false;
  private readonly held: Array<() => void> = [];

  private async record(call: SentCall): Promise<ApplyOutcome[]> {
    this.sent.push(call);
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    else await Promise.resolve();
    const err = this.fail(call);
    if (err !== undefined) throw err;
    this.delivered.push(call);
    return call.records.map((r) => ({ kind: "applied", version: r.version, origin: r.origin }));
  }

  /** Lets every held call go on. */
  release(): void {
    for (const r of this.held.splice(0)) r();
  }

  set(to: PeerRef, from: string, records: readonly VersionedRecord[]): Promise<ApplyOutcome[]> {
    return this.record({ kind: "set", to: to.id, from, records: [...records] });
  }

  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[]): Promise<ApplyOutcome[]> {
    return this.record({ kind: "remove", to: to.id, from, records: [...tombstones] });
  }

  /** "kind->peer:key@version,..." per call (keys only without versions). */
  summary(calls: readonly SentCall[] = this.sent, versions = true): string[] {
    return calls.map((c) => `${c.kind}->${c.to}:${c.records.map((r) => (versions ? `${r.key}@${r.version}` : r.key)).join(",")}`);
  }

  asTransport(): PeerTransport {
    return this as unknown as PeerTransport;
  }
}
