// depart(), the SIGTERM sequence up to the shutdown, on a ManualClock: it drains, waits for
// safe_to_stop logging progress every 5 s, leaves once safe; on SERVICE_DRAIN_TIMEOUT it logs what
// is left and does not leave.
import { expect } from "chai";
import { depart, drainStatus, type DrainFacts } from "../../../src/cluster/index.js";
import { recordingLogger } from "../../../src/log/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

const pending: DrainFacts = {
  draining: true, left: false, alone: false, peersLeaving: false, hintsQueued: 5, migrationsQueued: 0, keysUnsent: 0, keysPassDone: true, noLiveOwner: 0, repairsQueued: 0, writesInFlight: 0, callsInFlight: 0, unconfirmedPeers: [],
};

function run(timeoutMs: number, safeAtMs: number) {
  const clock = new ManualClock();
  const logger = recordingLogger("debug");
  const calls: string[] = [];
  const started = clock.monotonicMs();
  const outcome = depart(
    {
      drain: (reason) => calls.push(`drain ${reason}`),
      status: () => drainStatus(clock.monotonicMs() - started >= safeAtMs ? { ...pending, hintsQueued: 0 } : pending),
      leave: async () => {
        calls.push("leave");
      },
      clock,
      timers: clock,
      logger,
      timeoutMs,
      progressEveryMs: 5000,
      pollMs: 100,
    },
    "signal SIGTERM",
  );
  return { clock, logger, calls, outcome };
}

describe("cluster/departure", () => {
  it("waits for safe_to_stop, logging progress every 5 s, then leaves", async () => {
    const { clock, logger, calls, outcome } = run(60_000, 12_000);
    await clock.advanceAsync(13_000);
    const r = await outcome;
    expect(r.safe).to.equal(true);
    expect(calls).to.deep.equal(["drain signal SIGTERM", "leave"]);
    const progress = logger.records.filter((x) => x.message === "drain progress");
    expect(progress.map((x) => x.fields.elapsed_ms)).to.deep.equal([5000, 10000]);
    expect(progress[0]?.fields).to.deep.include({ hints_pending: 5, blockers: ["hints_pending: 5"] });
  });

  it("safe while every peer is leaving too: says the records were not handed off, and leaves", async () => {
    const clock = new ManualClock();
    const logger = recordingLogger("debug");
    const calls: string[] = [];
    const outcome = depart(
      {
        drain: () => undefined,
        status: () => drainStatus({ ...pending, migrationsQueued: 23, noLiveOwner: 23, peersLeaving: true }),
        leave: async () => void calls.push("leave"),
        clock,
        timers: clock,
        logger,
        timeoutMs: 60_000,
        progressEveryMs: 5000,
        pollMs: 100,
      },
      "signal SIGTERM",
    );
    await clock.advanceAsync(200);
    expect((await outcome).safe).to.equal(true);
    expect(calls).to.deep.equal(["leave"]);
    expect(logger.records.map((x) => x.message)).to.not.include("drain complete: data handed off, leaving the cluster");
    const said = logger.records.find((x) => x.message === "drain complete: no other node can take the records (a cluster of one, or every other node is leaving too), records not handed off; leaving the cluster");
    expect(said?.fields).to.deep.include({ hints_pending: 5, migrations_pending: 23 });
  });

  it("gives up at SERVICE_DRAIN_TIMEOUT: logs what is left and does not leave", async () => {
    const { clock, logger, calls, outcome } = run(3_000, Infinity);
    await clock.advanceAsync(4_000);
    const r = await outcome;
    expect(r.safe).to.equal(false);
    expect(calls).to.deep.equal(["drain signal SIGTERM"]);
    const last = logger.records.find((x) => x.message === "drain timed out: stopping with data not handed off");
    expect(last?.fields).to.deep.include({ timeout_ms: 3000, hints_pending: 5, blockers: ["hints_pending: 5"] });
  });
});
