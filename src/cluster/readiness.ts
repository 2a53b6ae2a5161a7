// Readiness: whether the node should receive traffic (GET /readyz). Ready means all of: the
// listeners are bound; the node is not draining; it has joined its cluster (a peer answered it,
// or it has no seeds: a cluster of one); and it has caught up with its peers after start-up, or
// SERVICE_READY_CATCHUP_TIMEOUT has passed since start. Caught-up is latched by CatchUp.everCaughtUp
// (so no /readyz poll is needed for it to stick): the catch-ups that follow later ring changes
// never make a ready node unready (every node would turn unready at once when one joins). A node
// that dropped its data after losing contact (ContactGuard) starts over: unready until it caught
// up again, or the timeout has passed since the drop.
// Liveness (/livez) is only that the event loop answers.
import type { Clock } from "../core/clock.js";

export interface ReadinessCheck {
  readonly ok: boolean;
  readonly detail: string;
}

/** The checks of /readyz, by name, in a fixed order. */
export interface ReadinessChecks {
  readonly bound: ReadinessCheck;
  readonly not_draining: ReadinessCheck;
  readonly joined: ReadinessCheck;
  readonly caught_up: ReadinessCheck;
}

export interface ReadinessDeps {
  readonly clock: Clock;
  readonly catchupTimeoutMs: number;
  readonly draining: () => boolean;
  /** True once a peer answered this node (MemberTable.contacted). */
  readonly contacted: () => boolean;
  /** True when the node has seeds to join (a node without seeds is a cluster of one). */
  readonly hasSeeds: boolean;
  /** True once a catch-up reached every peer since start-up (CatchUp.everCaughtUp: latched there). */
  readonly everCaughtUp: () => boolean;
}

export class Readiness {
  private listenersBound = false;
  /** Since when the catch-up is awaited: start-up, or the last time this node dropped its data. */
  private startedMs: number;

  constructor(private readonly deps: ReadinessDeps) {
    this.startedMs = deps.clock.monotonicMs();
  }

  /** The node dropped its data (ContactGuard): SERVICE_READY_CATCHUP_TIMEOUT counts again from now. */
  restartCatchUpWait(): void {
    this.startedMs = this.deps.clock.monotonicMs();
  }

  /** server.ts calls it once every listener is bound. */
  markBound(): void {
    this.listenersBound = true;
  }

  checks(): ReadinessChecks {
    const { deps } = this;
    const caughtUpOnce = deps.everCaughtUp();
    const waitedMs = deps.clock.monotonicMs() - this.startedMs;
    const joined = !deps.hasSeeds || deps.contacted();
    const draining = deps.draining();
    const caughtUp = caughtUpOnce || waitedMs >= deps.catchupTimeoutMs;
    return {
      bound: { ok: this.listenersBound, detail: this.listenersBound ? "listeners bound" : "listeners not bound yet" },
      not_draining: { ok: !draining, detail: draining ? "draining: writes go to other nodes" : "serving" },
      joined: { ok: joined, detail: !deps.hasSeeds ? "no seeds: a cluster of one" : joined ? "a peer answered" : "no seed or peer has answered yet" },
      caught_up: {
        ok: caughtUp,
        detail: caughtUpOnce ? "caught up with peers" : caughtUp ? "catch-up not finished, ready after SERVICE_READY_CATCHUP_TIMEOUT" : "pulling owned data from peers",
      },
    };
  }

  /** The checks and whether every one passes (the body and status of /readyz). */
  status(): { readonly ready: boolean; readonly checks: ReadinessChecks } {
    const checks = this.checks();
    return { ready: Object.values(checks).every((c: ReadinessCheck) => c.ok), checks };
  }
}
