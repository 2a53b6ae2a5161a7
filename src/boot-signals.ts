// Stop signals while the node boots. Node installs no handler for SIGTERM, and a process that is
// PID 1 (the container image runs node directly) ignores a signal it has no handler for: a pod
// deleted while its node booted lost the SIGTERM and was killed at the end of its grace period
// (120 s in the chart), without a drain. BootSignals is in place from the start of the process
// (main.ts, the entry, before the server's modules load): before the node exists a signal ends
// the process at once (it holds nothing yet); once the node exists the signal is kept and handed
// to the shutdown when that is installed; a second one then ends the process at once (exit 130),
// as a second signal does during the shutdown.

type Signal = "SIGTERM" | "SIGINT";
const SIGNALS: readonly Signal[] = ["SIGTERM", "SIGINT"];

/** The part of `process` BootSignals uses. */
export interface SignalSource {
  on(event: Signal, listener: (signal: Signal) => void): unknown;
  off(event: Signal, listener: (signal: Signal) => void): unknown;
}

export class BootSignals {
  private received: Signal | undefined;
  private holding = false;
  private exiting = false;
  private readonly onSignal = (signal: Signal): void => {
    if (this.exiting) return;
    if (!this.holding || this.received !== undefined) {
      this.exiting = true;
      this.exitNow(signal, this.holding ? 130 : 0);
    } else {
      this.received = signal;
    }
  };

  constructor(
    /** Ends the process with `code`: 0 before the node exists (nothing to hand off), 130 for a second signal. */
    private exitNow: (signal: Signal, code: number) => void,
    private readonly source: SignalSource,
  ) {
    for (const s of SIGNALS) source.on(s, this.onSignal);
  }

  /** How the process ends from now on (the server's, which logs it, once its logger exists). */
  exitWith(exitNow: (signal: Signal, code: number) => void): void {
    this.exitNow = exitNow;
  }

  /** The node exists from now on: a signal waits for the shutdown, which drains it. */
  hold(): void {
    this.holding = true;
  }

  /**
   * Hands the signals over to the shutdown: `install` adds its handlers, then these are removed;
   * returns the signal held meanwhile, if any. In that order: removing the last handler of a signal
   * stops Node's watcher of it, and a signal that had arrived but was not yet dispatched was
   * dropped with it (a SIGTERM at the end of the boot was lost about one time in two in a
   * review's loop, and the node served on).
   */
  handOver(install: () => void): Signal | undefined {
    install();
    for (const s of SIGNALS) this.source.off(s, this.onSignal);
    return this.received;
  }
}
