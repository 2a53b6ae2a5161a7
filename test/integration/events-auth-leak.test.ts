// GET /cluster/events behind HTTP Basic on a real node: clients that leave while their bcrypt
// check is under way are never subscribed, so a burst of more than SSE_SUBSCRIBERS_MAX such
// requests leaves every subscriber slot free (before the fix, each one took a slot for good and
// the stream answered 503 to everyone until a restart).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { SSE_SUBSCRIBERS_MAX } from "../../src/core/limits.js";
import { basic, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { sleep } from "./observability-helpers.js";

/** Opens GET /cluster/events with a bearer token; resolves with the status and a closer. */
function openStream(port: number, token: string): Promise<{ status: number; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/cluster/events", headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      res.on("data", () => undefined);
      res.on("error", () => undefined);
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on("error", reject);
  });
}

/** Sends GET /cluster/events with `authorization` on a new connection; resolves once written. */
function sendAndKeep(port: number, authorization: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.write(`GET /cluster/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\n\r\n`, () => resolve(s));
    });
    s.on("data", () => undefined);
    s.once("error", reject);
  });
}

describe("events: clients gone during an HTTP Basic check take no /cluster/events slot", function () {
  this.timeout(60_000);
  let dir: string;
  let node: NodeProcess;
  const opened: Array<{ close: () => void }> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-events-leak-"));
    // Cost 12: a check of a few hundred ms, so every request below is still waiting when its client leaves.
    const policy = {
      tokens: [{ id: "reader", token: "tok-read", scopes: ["read"] }],
      users: [{ username: "bob", password_hash: bcrypt.hashSync("pw", 12), scopes: ["read"] }],
      allow_basic_without_tls: true,
    };
    writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
    node = await startNode({ id: "events-leak", env: { SERVICE_AUTH_CONFIG: join(dir, "policy.json") } });
  });
  after(async () => {
    for (const s of opened.splice(0)) s.close();
    await node?.stop("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${SSE_SUBSCRIBERS_MAX + 4} stream requests whose clients leave during the bcrypt check: afterwards ${SSE_SUBSCRIBERS_MAX} streams are all 200`, async () => {
    const auth = basic("bob", "pw").authorization as string;
    const sockets = await Promise.all(Array.from({ length: SSE_SUBSCRIBERS_MAX + 4 }, () => sendAndKeep(node.mgmtPort, auth)));
    await sleep(30);
    for (const s of sockets) s.destroy();
    // The same credential joins the check under way (or finds its cached success): once it is
    // answered, the abandoned requests have been through authentication too.
    const r = await call(`${node.mgmt}/cluster/members`, { headers: basic("bob", "pw") });
    expect(r.status).to.equal(200);
    await sleep(200);
    for (let done = 0; done < SSE_SUBSCRIBERS_MAX; ) {
      const batch = Math.min(32, SSE_SUBSCRIBERS_MAX - done);
      const streams = await Promise.all(Array.from({ length: batch }, () => openStream(node.mgmtPort, "tok-read")));
      opened.push(...streams);
      expect(streams.map((s) => s.status).filter((s) => s !== 200), `streams ${done + 1}..${done + batch}`).to.deep.equal([]);
      done += batch;
    }
    const extra = await openStream(node.mgmtPort, "tok-read");
    opened.push(extra);
    expect(extra.status, "the cap still holds").to.equal(503);
  });
});
