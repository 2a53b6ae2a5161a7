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

describe("hostile: a Basic failure flood from many addresses does not keep out a user with the right password", function () {
  this.timeout(120_000);
  let node: NodeProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "basic-flood-"));
    const policy = join(dir, "policy.json");
    // Cost 12: about 200–300 ms a check here, so eight addresses at their limit keep both workers
    // and the queue busy.
    writeFileSync(policy, JSON.stringify({ users: [{ username: USER, password_hash: bcrypt.hashSync(PASSWORD, 12), scopes: ["read"] }], allow_basic_without_tls: true }));
    node = await startNode({ id: "basic-flood", env: { SERVICE_AUTH_CONFIG: policy } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("eight addresses sending 10 wrong passwords each, every second for 4 s: the right password from a ninth address is answered (404: no such key) on every try", async () => {
    const url = `${node.api}/v1/cache/some-key`;
    const flood: Array<Promise<number>> = [];
    const flooding = (async () => {
      for (let round = 0; round < 4; round++) {
        for (const address of FLOODERS) {
          for (let i = 0; i < 10; i++) flood.push(call(url, { headers: basic(USER, `wrong-${address}-${round}-${i}`), localAddress: address }).then((r) => r.status));
        }
        await sleep(1000);
      }
    })();
    await sleep(300);
    const user: number[] = [];
    for (let i = 0; i < 8; i++) {
      user.push((await call(url, { headers: basic(USER, PASSWORD), localAddress: "127.0.0.10" })).status);
      await sleep(400);
    }
    await flooding;
    const statuses = await Promise.all(flood);
    const count = (s: number) => statuses.filter((x) => x === s).length;
    console.log(`[hostile] flood answers: ${count(401)} x 401, ${count(429)} x 429, ${count(503)} x 503; the user's: ${user.join(", ")}`);
    expect(count(503), "the flood did fill the queue").to.be.above(0);
    expect(user, "every try of the right password was served").to.deep.equal(Array.from({ length: 8 }, () => 404));
  });
});
