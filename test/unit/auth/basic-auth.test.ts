import { expect } from "chai";
import bcrypt from "bcryptjs";
import { BasicVerifier } from "../../../src/auth/basic-auth.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { countingCompare } from "./chain-helpers.js";

const USERS = [
  { username: "alice", passwordHash: bcrypt.hashSync("alice-pw", 4), scopes: ["read", "write"] as const },
  { username: "bob", passwordHash: bcrypt.hashSync("bob-pw", 4), scopes: ["read"] as const },
];


describe("auth/basic-auth BasicVerifier", () => {
  it("resolves a right password to the user's identity and refuses a wrong one or an unknown user", async () => {
    const v = new BasicVerifier(USERS, { clock: new ManualClock() });
    expect(await v.verify("alice", "alice-pw")).to.deep.equal({ kind: "user", id: "alice", scopes: ["read", "write"] });
    expect(await v.verify("alice", "bob-pw")).to.equal(undefined);
    expect(await v.verify("mallory", "alice-pw")).to.equal(undefined);
    expect(await v.verify("alice", "")).to.equal(undefined);
  });

  it("runs bcrypt once per credential while the cached success is fresh, then again after the TTL", async () => {
    const clock = new ManualClock();
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock, compare: c.compare, cacheTtlMs: 30_000 });
    expect(await v.verify("alice", "alice-pw")).to.include({ id: "alice" });
    expect(c.calls()).to.equal(1);
    // A cached success is a plain value: no promise, no bcrypt.
    const cached = v.verify("alice", "alice-pw");
    expect(cached).to.not.be.instanceOf(Promise);
    expect(cached).to.include({ id: "alice" });
    clock.advance(29_999);
    expect(v.verify("alice", "alice-pw")).to.not.be.instanceOf(Promise);
    expect(c.calls()).to.equal(1);
    clock.advance(1);
    expect(await v.verify("alice", "alice-pw")).to.include({ id: "alice" });
    expect(c.calls()).to.equal(2);
  });

  it("never caches a failure, and a cached success does not let a wrong password in", async () => {
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock: new ManualClock(), compare: c.compare });
    await v.verify("alice", "alice-pw");
    expect(await v.verify("alice", "alice-pw2")).to.equal(undefined);
    expect(await v.verify("alice", "alice-pw2")).to.equal(undefined);
    expect(c.calls()).to.equal(3);
    expect(v.cachedEntries).to.equal(1);
  });

  it("does not confuse credentials that concatenate the same way", async () => {
    const users = [
      { username: "ab", passwordHash: bcrypt.hashSync("c", 4), scopes: ["read"] as const },
      { username: "a", passwordHash: bcrypt.hashSync("bc", 4), scopes: ["admin"] as const },
    ];
    const v = new BasicVerifier(users, { clock: new ManualClock() });
    expect(await v.verify("ab", "c")).to.include({ id: "ab" });
    expect(await v.verify("a", "bc")).to.include({ id: "a" });
  });

  it("checks an unknown user against a decoy hash, so it costs a bcrypt run like a wrong password", async () => {
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock: new ManualClock(), compare: c.compare });
    expect(await v.verify("nobody", "whatever")).to.equal(undefined);
    expect(c.calls()).to.equal(1);
  });

  it("shares one bcrypt run between concurrent checks of the same credential", async () => {
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock: new ManualClock(), compare: c.compare });
    const all = await Promise.all(Array.from({ length: 20 }, () => v.verify("bob", "bob-pw")));
    expect(all.every((i) => i?.id === "bob")).to.equal(true);
    expect(c.calls()).to.equal(1);
  });

  it("keeps at most the configured number of cached entries, dropping the oldest", async () => {
    const clock = new ManualClock();
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock, compare: c.compare, cacheEntriesMax: 1 });
    await v.verify("alice", "alice-pw");
    await v.verify("bob", "bob-pw");
    expect(v.cachedEntries).to.equal(1);
    expect(v.verify("bob", "bob-pw")).to.not.be.instanceOf(Promise);
    expect(v.verify("alice", "alice-pw")).to.be.instanceOf(Promise);
  });

  it("treats a failing comparison (corrupt hash) as a wrong password", async () => {
    const v = new BasicVerifier(USERS, { clock: new ManualClock(), compare: () => Promise.reject(new Error("bad hash")) });
    expect(await v.verify("alice", "alice-pw")).to.equal(undefined);
  });
});
