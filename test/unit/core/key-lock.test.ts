import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { KeyLock } from "../../../src/core/key-lock.js";

/** A task that runs until released, recording when it starts and ends. */
function gate(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    release = r;
  });
  return {
    task: async () => {
      log.push(`${name}:start`);
      await done;
      log.push(`${name}:end`);
      return name;
    },
    release: () => release(),
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe("core/key-lock", () => {
  it("runs tasks of one key one at a time in arrival order, and tasks of other keys at once", async () => {
    const lock = new KeyLock({ waitersPerKey: 10, keysMax: 10 });
    const log: string[] = [];
    const a = gate(log, "a");
    const b = gate(log, "b");
    const c = gate(log, "c");
    const pa = lock.run("k", a.task);
    const pb = lock.run("k", b.task);
    const pc = lock.run("other", c.task);
    await turn();
    expect(log).to.deep.equal(["a:start", "c:start"]);
    expect(lock.queuedOn("k")).to.equal(2);
    b.release();
    await turn();
    expect(log).to.deep.equal(["a:start", "c:start"]);
    a.release();
    c.release();
    expect(await Promise.all([pa, pb, pc])).to.deep.equal(["a", "b", "c"]);
    expect(log.indexOf("a:end")).to.be.lessThan(log.indexOf("b:start"));
    expect(lock.keys).to.equal(0);
  });

  it("a failing task passes the key on and its caller gets the error", async () => {
    const lock = new KeyLock({ waitersPerKey: 10, keysMax: 10 });
    const failing = lock.run("k", () => Promise.reject(new Error("boom")));
    const next = lock.run("k", () => Promise.resolve("after"));
    let caught: unknown;
    try {
      await failing;
    } catch (err) {
      caught = err;
    }
    expect((caught as Error).message).to.equal("boom");
    expect(await next).to.equal("after");
    expect(lock.keys).to.equal(0);
  });

  it("past the waiters per key or the keys at once a task fails at once with 503 UNAVAILABLE and Retry-After 1", async () => {
    const lock = new KeyLock({ waitersPerKey: 2, keysMax: 2 });
    const log: string[] = [];
    const g = gate(log, "g");
    const first = lock.run("k", g.task);
    const second = lock.run("k", () => Promise.resolve("second"));
    const refused = await lock.run("k", () => Promise.resolve("third")).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(CacheError);
    expect(refused).to.include({ code: "UNAVAILABLE", retryAfterS: 1 });
    const other = lock.run("k2", () => Promise.resolve("k2"));
    const tooMany = await lock.run("k3", () => Promise.resolve("k3")).catch((e: unknown) => e);
    expect(tooMany).to.include({ code: "UNAVAILABLE" });
    g.release();
    expect(await Promise.all([first, second, other])).to.deep.equal(["g", "second", "k2"]);
    expect(await lock.run("k3", () => Promise.resolve("later"))).to.equal("later");
  });
});
