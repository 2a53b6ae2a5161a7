import { expect } from "chai";
import bcrypt from "bcryptjs";
import { BcryptPool } from "../../../src/auth/bcrypt-pool.js";
import { systemTimers, type Timers } from "../../../src/core/clock.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";

describe("auth/bcrypt-pool", function () {
  this.timeout(20_000);
  const hash = bcrypt.hashSync("right", 8);
  const pools: BcryptPool[] = [];
  const pool = (size: number, queueMax: number, timers: Timers = systemTimers) => {
    const p = new BcryptPool({ size, queueMax, retryAfterS: 1, idleExitMs: 5_000, timers });
    pools.push(p);
    return p;
  };
  afterEach(async () => {
    for (const p of pools.splice(0)) await p.close();
  });

  it("answers true for the right password and false for a wrong one or a malformed hash", async () => {
    const p = pool(2, 4);
    expect(await Promise.all([p.compare("right", hash), p.compare("wrong", hash), p.compare("right", "not a hash")])).to.deep.equal([true, false, false]);
    expect(p.started).to.equal(2);
  });

  it("runs off the event loop: the main thread's event loop stays mostly idle while a cost-12 check runs", async () => {
    const slow = bcrypt.hashSync("x", 12); // a few hundred ms of bcrypt
    const p = pool(1, 1);
    await p.compare("x", hash); // the worker is started and warm
    const before = performance.eventLoopUtilization();
    const started = performance.now();
    expect(await p.compare("x", slow)).to.equal(true);
    const elu = performance.eventLoopUtilization(before);
    expect(performance.now() - started, "the check took long enough to matter").to.be.above(100);
    // bcrypt on this thread would keep the loop busy (utilization near 1) for the whole check.
    expect(elu.utilization, "event-loop utilization of the main thread during the check").to.be.below(0.3);
  });

  it("refuses a check with 503 UNAVAILABLE and Retry-After once every worker is busy and the queue is full", async () => {
    const p = pool(1, 2);
    const running = [p.compare("a", hash), p.compare("b", hash), p.compare("c", hash)]; // one running, two queued
    expect(p.queued).to.equal(2);
    const refused = await p.compare("d", hash).catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(CacheError);
    expect(refused).to.include({ code: "UNAVAILABLE", retryAfterS: 1 });
    expect((refused as CacheError).status).to.equal(503);
    expect(await Promise.all(running)).to.deep.equal([false, false, false]);
    expect(await p.compare("right", hash), "the queue drained").to.equal(true);
  });

  it("a suspect check (its client failed lately) waits behind the others, in a queue of its own: a flood of suspect checks neither delays nor refuses a clean one", async () => {
    const p = pool(1, 2);
    const order: string[] = [];
    const track = (name: string, c: Promise<boolean>) => c.then((ok) => (order.push(name), ok));
    const running = track("running", p.compare("a", hash, true));
    const suspects = [track("s1", p.compare("b", hash, true)), track("s2", p.compare("c", hash, true))];
    const refused = await p.compare("d", hash, true).catch((err: unknown) => err);
    expect(refused, "the suspect queue is full").to.be.instanceOf(CacheError).and.include({ code: "UNAVAILABLE" });
    const clean = track("clean", p.compare("right", hash));
    expect(p.queued).to.equal(3);
    expect(await clean, "a clean check is admitted with the suspect queue full").to.equal(true);
    await Promise.all([running, ...suspects]);
    expect(order, "the clean check ran next, ahead of the suspect ones queued before it").to.deep.equal(["running", "clean", "s1", "s2"]);
  });

  it("close() ends the workers and refuses waiting and later checks with 503", async () => {
    const p = pool(1, 4);
    const waiting = [p.compare("a", hash), p.compare("b", hash)].map((c) => c.catch((err: unknown) => (err as CacheError).code));
    await p.close();
    expect(await Promise.all(waiting)).to.deep.equal(["UNAVAILABLE", "UNAVAILABLE"]);
    expect(await p.compare("right", hash).catch((err: unknown) => (err as CacheError).code)).to.equal("UNAVAILABLE");
    expect(p.started).to.equal(0);
  });

  it("two pools share nothing: closing one leaves the other working", async () => {
    const a = pool(1, 1);
    const b = pool(1, 1);
    expect(await a.compare("right", hash)).to.equal(true);
    await a.close();
    expect(await b.compare("right", hash)).to.equal(true);
  });

  it("a worker idle for idleExitMs ends (its memory returns to the system); the next check starts a new one", async () => {
    const clock = new ManualClock();
    const p = pool(1, 4, clock);
    expect(await p.compare("right", hash)).to.equal(true);
    expect(p.started).to.equal(1);
    clock.advance(4_999);
    expect(p.started, "still within the idle window").to.equal(1);
    clock.advance(1);
    expect(p.started, "retired after 5 s idle").to.equal(0);
    expect(await p.compare("wrong", hash)).to.equal(false);
    expect(p.started).to.equal(1);
  });
});
