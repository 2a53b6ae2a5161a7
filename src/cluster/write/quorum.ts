// Quorum arithmetic (pure). R is the replica count a request needs answers from:
// min(replication, nodes this node has seen in the cluster, pruned ones included; only a
// manual removal lowers it).
import type { ConsistencyLevel } from "../../config/index.js";

export function replicaCount(replication: number, knownNodes: number): number {
  return Math.max(1, Math.min(replication, knownNodes));
}

/** Acknowledgements (or answers) a level needs out of `r`: ONE 1, QUORUM floor(r/2)+1, ALL r. */
export function requiredAcks(level: ConsistencyLevel, r: number): number {
  switch (level) {
    case "one":
      return 1;
    case "quorum":
      return Math.floor(r / 2) + 1;
    case "all":
      return r;
  }
}

/**
 * A QUORUM or ALL write is accepted only while this node sees a strict majority of the known
 * nodes (itself included) not dead, so the minority side of a partition refuses them even
 * after it has pruned the others.
 */
export function hasMajority(notDeadNodes: number, knownNodes: number): boolean {
  return notDeadNodes * 2 > knownNodes;
}

/** The answers a quorum wait collected. */
export interface QuorumWait<T> {
  /** True when `need` acknowledgements arrived; false when every call ended short of it. */
  readonly reached: boolean;
  /** Every answer so far, in arrival order (`inHand` first), acknowledgements or not. */
  readonly answers: readonly T[];
  /** The answers of the calls still under way when the wait ended (failed calls left out). */
  readonly late: Promise<T[]>;
}

/**
 * Waits for `need` acknowledgements out of `inHand` (answers already there, such as the local
 * node's) and `calls`: resolves as soon as `need` answers satisfy `isAck`, or once every call has
 * settled without that. A rejected call is no answer. Answers that arrive after the wait are in
 * `late`, for callers that act on them (read repair). Pure: no timers, no I/O.
 */
export function waitForQuorum<T>(
  calls: ReadonlyArray<Promise<T>>,
  need: number,
  inHand: readonly T[] = [],
  isAck: (answer: T) => boolean = () => true,
): Promise<QuorumWait<T>> {
  const answers: T[] = [...inHand];
  let acks = answers.filter(isAck).length;
  let pending = calls.length;
  let done = false;
  const late: T[] = [];
  let lateDone: (rest: T[]) => void = () => undefined;
  const latePromise = new Promise<T[]>((resolve) => {
    lateDone = resolve;
  });
  return new Promise((resolve) => {
    const settle = (reached: boolean) => {
      done = true;
      resolve({ reached, answers: [...answers], late: latePromise });
      if (pending === 0) lateDone(late);
    };
    const arrived = (answer: T | undefined, ok: boolean) => {
      pending--;
      if (done) {
        if (ok) late.push(answer as T);
        if (pending === 0) lateDone(late);
        return;
      }
      if (ok) {
        answers.push(answer as T);
        if (isAck(answer as T)) acks++;
      }
      if (acks >= need) settle(true);
      else if (pending === 0) settle(false);
    };
    if (acks >= need) settle(true);
    else if (pending === 0) settle(false);
    for (const call of calls) call.then((a) => arrived(a, true), () => arrived(undefined, false));
  });
}
