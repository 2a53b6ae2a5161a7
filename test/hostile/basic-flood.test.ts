// A flood of wrong Basic passwords from many addresses, against a real node: each address stays
// within its failure limit (10 a second), yet together they kept the bcrypt queue full, and a
// user with the right password from another address got 503 on every try (found by a review).
// Checks of suspect clients now wait in a queue of their own, behind everyone else's.
import { expect } from "chai";
import bcrypt from "bcryptjs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { basic, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const USER = "alice";
const PASSWORD = "correct horse battery staple";
/** Flooding client addresses: 127.0.0.2 to 127.0.0.9. */
const FLOODERS = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The user's tries during the flood, each with another account (so each one is checked). */
const TRIES = 8;

describe("hostile: a Basic failure flood from many addresses does not keep out a user with the right password", function () {
  this.timeout(120_000);
  let node: NodeProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "basic-flood-"));
    const policy = join(dir, "policy.json");
    // Cost 12: about 200–300 ms a check here, so eight addresses at their limit keep both workers
    // and the queue busy.
    // The user signs in as a different account on each try (a success is cached for 30 s, so
    // the same account would reach the password check only once): one hash serves them all.
    const hash = bcrypt.hashSync(PASSWORD, 12);
    const users = [USER, ...Array.from({ length: TRIES }, (_, i) => `user-${i}`)].map((username) => ({ username, password_hash: hash, scopes: ["read"] }));
    writeFileSync(policy, JSON.stringify({ users, allow_basic_without_tls: true }));
    node = await startNode({ id: "basic-flood", env: { SERVICE_AUTH_CONFIG: policy } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("eight addresses keeping 10 wrong passwords each under way for 4 s: the right password from a ninth address is answered (404: no such key) on every try", async () => {
    const url = `${node.api}/v1/cache/some-key`;
    // Each flooding address keeps ten wrong passwords under way, the next sent as soon as one is
    // checked: its failure limit, not the flood, decides how many checks it starts (10 a second),
    // and eight such addresses start more than two workers can check.
    const statuses: number[] = [];
    const until = performance.now() + 4_000;
    const worker = async (address: string, n: number) => {
      for (let i = 0; performance.now() < until; i++) {
        const status = (await call(url, { headers: basic(USER, `wrong-${address}-${n}-${i}`), localAddress: address })).status;
        statuses.push(status);
        // A refusal without a check (429, 503) comes at once: a short pause keeps the flood from
        // being a flood of connections instead.
        if (status !== 401) await sleep(50);
      }
    };
    const flooding = Promise.all(FLOODERS.flatMap((address) => Array.from({ length: 10 }, (_, n) => worker(address, n))));
    await sleep(300);
    const user: number[] = [];
    for (let i = 0; i < TRIES; i++) {
      user.push((await call(url, { headers: basic(`user-${i}`, PASSWORD), localAddress: "127.0.0.10" })).status);
      await sleep(400);
    }
    await flooding;
    const count = (s: number) => statuses.filter((x) => x === s).length;
    console.log(`[hostile] flood answers: ${count(401)} x 401, ${count(429)} x 429, ${count(503)} x 503; the user's: ${user.join(", ")}`);
    expect(count(503), "the flood did fill the queue").to.be.above(0);
    expect(user, "every try of the right password was served").to.deep.equal(Array.from({ length: TRIES }, () => 404));
  });
});
