// What Ctrl-C and SIGTERM do to a campaign: the first stops the run in progress with its grace
// (the campaign then writes its summary and exits); a second kills the run's process group at
// once and exits 130, without the summary line of that run.

export interface StopDeps {
  /** Stops the run in progress and starts no other (Campaign.stop). */
  stop(): void;
  /** Kills the run in progress and its process group at once (ChildRuns.killNow). */
  killNow(): void;
  print(line: string): void;
  exit(code: number): void;
}

/** The handler to give each signal: called with the signal's name. */
export function stopOnSignals(deps: StopDeps): (sig: string) => void {
  let stopping = false;
  return (sig) => {
    if (stopping) {
      deps.print(`campaign: second ${sig}: killing the run in progress and leaving now`);
      deps.killNow();
      deps.exit(130);
      return;
    }
    stopping = true;
    deps.print(`campaign: ${sig}: stopping the run in progress, then writing the summary (again to kill it at once)`);
    deps.stop();
  };
}
