// Sends client writes to their primary. Writes for the same primary, consistency level and
// "sender applies" flag that are pending together travel in one Forward call (PEER_BATCHING).
import type { Clock, Timers } from "../../core/clock.js";
import { PEER_BATCHING } from "../../core/limits.js";
import type { ConsistencyLevel } from "../../config/index.js";
import type { Metrics } from "../../observability/index.js";
import type { ClientWrite, PeerRef, PeerTransport, WriteOutcome } from "../../transport/index.js";
import { batchOptions, PeerBatcher } from "./batcher.js";

export interface ForwarderDeps {
  readonly selfId: string;
  readonly transport: PeerTransport;
  readonly timers: Timers;
  readonly clock: Clock;
  readonly metrics: Metrics;
}

/** Approximate wire size of a forwarded write. */
function writeBytes(w: ClientWrite): number {
  return w.key.length * 3 + w.value.length + 32;
}

export class Forwarder {
  private readonly batcher: PeerBatcher<ClientWrite, WriteOutcome>;

  constructor(deps: ForwarderDeps) {
    this.batcher = new PeerBatcher(
      (peer, writes, lane) => {
        const [level, applies] = lane.split("|");
        return deps.transport.forward(peer, { from: deps.selfId, consistency: level as ConsistencyLevel, writes, senderApplies: applies === "1", sentAtMs: deps.clock.nowMs() });
      },
      batchOptions(PEER_BATCHING.forward, writeBytes, deps.timers, () => deps.metrics.inc("dist.peer.queue_overflow")),
    );
  }

  /** Forward calls made so far. */
  get calls(): number {
    return this.batcher.calls;
  }

  /**
   * Forwards `write` to `primary`; resolves with the primary's outcome (which may carry its error
   * code) and rejects on a transport failure. `senderApplies`: this node owns the key and stores
   * the stamped result itself, so the primary does not push it back.
   */
  forward(primary: PeerRef, write: ClientWrite, level: ConsistencyLevel, senderApplies: boolean): Promise<WriteOutcome> {
    return this.batcher.enqueue(primary, write, `${level}|${senderApplies ? 1 : 0}`);
  }
}
