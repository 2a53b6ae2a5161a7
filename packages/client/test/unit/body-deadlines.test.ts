// The Node client's limit over whole bodies: one sweep destroys the bodies read past their
// deadline (their read rejects with a TimeoutError), forgets those that ended, and stops once no
// body is being read.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { BodyDeadlines, SWEEP_MS, type DestroyableBody } from "../../src/body-deadlines.js";

/** A body whose read ends when the test says, or when it is destroyed. */
class HeldBody implements DestroyableBody {
  destroyedWith: Error | undefined;
  private settle: { resolve: (b: ArrayBuffer) => void; reject: (e: Error) => void } | undefined;
  arrayBuffer(): Promise<ArrayBuffer> {
    return new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }
  destroy(err: Error): void {
    this.destroyedWith = err;
    this.settle?.reject(err);
  }
  finish(): void {
    this.settle?.resolve(new ArrayBuffer(3));
  }
}

const settled = async <T>(p: Promise<T>) => {
  let state: "pending" | "resolved" | "rejected" = "pending";
  let reason: unknown;
  p.then(
    () => (state = "resolved"),
    (e: unknown) => ((state = "rejected"), (reason = e)),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return { state, reason };
};

describe("client/body-deadlines", () => {
  it("a body still read at its deadline is destroyed with a TimeoutError at the next sweep, at most SWEEP_MS late", async () => {
    const clock = new ManualClock();
    const d = new BodyDeadlines(clock, clock);
    const slow = new HeldBody();
    const read = d.read(slow, clock.nowMs() + 1000);
    clock.advance(1000 - SWEEP_MS);
    expect((await settled(read)).state, "before the deadline").to.equal("pending");
    clock.advance(2 * SWEEP_MS);
    const after = await settled(read);
    expect(after.state).to.equal("rejected");
    expect((after.reason as Error).name).to.equal("TimeoutError");
    expect(slow.destroyedWith).to.equal(after.reason);
    expect(d.size).to.equal(0);
  });

  it("a body read in time resolves, is forgotten, and leaves no sweep running", async () => {
    const clock = new ManualClock();
    const d = new BodyDeadlines(clock, clock);
    const quick = new HeldBody();
    const read = d.read(quick, clock.nowMs() + 1000);
    expect(d.size).to.equal(1);
    quick.finish();
    expect((await settled(read)).state).to.equal("resolved");
    expect(d.size).to.equal(0);
    clock.advance(5000);
    expect(quick.destroyedWith, "never destroyed after it ended").to.equal(undefined);
    expect(clock.pending, "the sweep stopped with nothing to watch").to.equal(0);
  });
});
