// A stop signal while the node boots, with the node as PID 1 (the container image runs node
// directly). A PID 1 ignores a signal it has no handler for, and the node installed its handlers
// only once its listeners were bound: a SIGTERM during a slow boot (here an OIDC issuer that
// accepts and never answers: 5 s per fetch) was lost, and Kubernetes killed the pod at the end of
// its grace period. The node runs in a PID namespace of its own (unshare, as root).
import { expect } from "chai";
import { readFileSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { LOG } from "../../src/log/index.js";
import { startNode } from "../helpers/node-process.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The process `unshare --fork` started: its only child. */
async function childOf(pid: number): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    if (children !== "") return Number(children.split(" ")[0]);
    await sleep(20);
  }
  throw new Error(`process ${pid} started no child`);
}

/**
 * Waits until `pid` runs tini and takes SIGTERM: it blocks every signal, then waits for them in
 * sigtimedwait (which unblocks the waited ones while it sleeps). Until `unshare --fork` has exec'd
 * tini, its child is unshare itself, a PID 1 without a handler, which ignores the signal: a
 * SIGTERM sent then was lost, and the test hung (1 run in CI).
 */
async function tiniWaiting(pid: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const blocked = BigInt(`0x${/^SigBlk:\s+([0-9a-f]+)$/m.exec(status)?.[1] ?? "0"}`);
    const waiting = readFileSync(`/proc/${pid}/wchan`, "utf8").includes("sigtimedwait");
    if (/^Name:\s+tini$/m.test(status) && (waiting || (blocked & (1n << 14n)) !== 0n)) return;
    await sleep(5);
  }
  throw new Error(`process ${pid} is not tini waiting for signals`);
}

describe("stop signals during boot, the node as PID 1", function () {
  this.timeout(60_000);
  let silent: net.Server;
  const held: net.Socket[] = [];

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    silent = net.createServer((s) => void held.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  });
  after(async () => {
    held.forEach((s) => s.destroy());
    await new Promise<void>((r) => silent?.close(() => r()));
  });

  it("under tini as PID 1, as the image runs it: a SIGTERM the moment the container starts ends the node at once (node as PID 1 ignores one that comes before its handlers)", async () => {
    const node = await startNode({ id: "boot-tini", wrap: ["unshare", "--pid", "--fork", "tini", "-s", "--"], readyMessage: false });
    const init = await childOf(node.child.pid as number);
    await tiniWaiting(init);
    expect(readFileSync(`/proc/${init}/status`, "utf8")).to.match(/^NSpid:\s+\d+\s+1$/m);
    const sent = Date.now();
    process.kill(init, "SIGTERM");
    const code = await node.exited;
    expect(Date.now() - sent, "ms from SIGTERM to exit").to.be.below(2_000);
    // 0 once the node's handlers are in place; 143 (killed by the signal) in Node's own start-up.
    expect([0, 143]).to.include(code);
    expect(node.logs.some((r) => r.message === "client API listener started"), "it never served").to.equal(false);
  });

  it("SIGTERM while the OIDC issuer keeps the boot waiting ends the process at once with exit 0, not after the boot", async () => {
    const node = await startNode({
      id: "boot-signal",
      wrap: ["unshare", "--pid", "--fork"],
      env: { SERVICE_OIDC_ISSUER: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, SERVICE_OIDC_AUDIENCE: "cache" },
      readyMessage: false,
    });
    const pid = await childOf(node.child.pid as number);
    expect(readFileSync(`/proc/${pid}/status`, "utf8")).to.match(/^NSpid:\s+\d+\s+1$/m);
    await node.waitForLog(LOG.starting);
    await sleep(300);
    const sent = Date.now();
    process.kill(pid, "SIGTERM");
    const code = await node.exited;
    // Before: the signal was ignored; the process ended 5 s later, when the fetch timed out (exit 1).
    expect(Date.now() - sent, "ms from SIGTERM to exit").to.be.below(2_000);
    expect(code).to.equal(0);
    expect(node.logs.some((r) => r.message === LOG.shutdownSignal && r.booting === true)).to.equal(true);
  });
});
