// Cross-site request forgery against a real node that needs no credential (no policy: the
// anonymous identity holds every scope). A page on another site could submit forms to POST
// /clear and /dist/drain and the browser sent them: a review emptied and drained a node that way.
// State-changing requests whose Origin or Sec-Fetch-Site names another site are now 403 on both
// listeners (the Koa routes and the hot item routes); the node's own pages and programs, which
// send no Origin, are served as before.
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const EVIL = { origin: "http://attacker.example", "sec-fetch-site": "cross-site" };

describe("integration/cross-site writes", function () {
  this.timeout(60_000);
  let n: NodeProcess;

  before(async () => {
    n = await startNode({ id: "csrf-1" });
  });

  after(async () => {
    await n.stop();
  });

  const items = async () => (await call(`${n.mgmt}/stats`)).json<{ items: number }>().items;

  it("a form POST to /clear or /dist/drain from another site is 403 and changes nothing", async () => {
    for (let i = 0; i < 5; i++) expect((await call(`${n.api}/v1/cache/k${i}`, { method: "PUT", body: "v" })).status).to.equal(200);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    for (const headers of [{ ...form, origin: "http://attacker.example" }, { ...form, "sec-fetch-site": "cross-site" }, { ...form, "sec-fetch-site": "same-site" }, { ...form, origin: "null" }]) {
      for (const path of ["/clear", "/dist/drain", "/evict", "/trigger-expiration"]) {
        const r = await call(`${n.mgmt}${path}`, { method: "POST", headers, body: "x=1" });
        const body = expectEnvelope(r, 403, "FORBIDDEN", /another site/);
        expect(body.details).to.deep.equal({ reason: "cross_site_request" });
      }
    }
    expect(await items()).to.equal(5);
    expect((await call(`${n.mgmt}/readyz`)).status, "not draining").to.equal(200);
  });

  it("writes of the client listener from another site are 403 too: item PUT and DELETE, increments, batches", async () => {
    expectEnvelope(await call(`${n.api}/v1/cache/k0`, { method: "PUT", headers: EVIL, body: "changed" }), 403, "FORBIDDEN");
    expectEnvelope(await call(`${n.api}/v1/cache/k0`, { method: "DELETE", headers: EVIL }), 403, "FORBIDDEN");
    expectEnvelope(await call(`${n.api}/v1/cache/c/incr`, { method: "POST", headers: { ...EVIL, "content-type": "text/plain" }, body: "" }), 403, "FORBIDDEN");
    expectEnvelope(await call(`${n.api}/v1/cache/batch/put`, { method: "POST", headers: { ...EVIL, "content-type": "application/json" }, body: '{"items":[]}' }), 403, "FORBIDDEN");
    expect((await call(`${n.api}/v1/cache/k0`)).body.toString()).to.equal("v");
    expect((await call(`${n.api}/v1/cache/c`)).status, "no counter was made").to.equal(404);
  });

  it("the peer port refuses whatever a browser sends (in protected mode it serves any loopback caller): a key write as text/plain, a drain", async () => {
    const version = Date.now() * 1000 + 500;
    const set = await call(`http://127.0.0.1:${n.distPort}/internal/set`, {
      method: "POST",
      headers: { ...EVIL, "content-type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({ from: "csrf-1", entries: [{ key: "victim", value: Buffer.from("pwned").toString("base64"), version: String(version), origin: "csrf-1" }] }),
    });
    expect(expectEnvelope(set, 403, "FORBIDDEN", /browser/).details).to.deep.equal({ reason: "cross_site_request" });
    expect((await call(`${n.api}/v1/cache/victim`)).status, "nothing written").to.equal(404);
    const drain = await call(`http://127.0.0.1:${n.distPort}/dist/drain`, { method: "POST", headers: { "sec-fetch-site": "cross-site", "content-type": "application/x-www-form-urlencoded" }, body: "" });
    expectEnvelope(drain, 403, "FORBIDDEN");
    expect((await call(`${n.mgmt}/readyz`)).status, "not draining").to.equal(200);
    expect((await call(`http://127.0.0.1:${n.distPort}/health`)).status, "a caller without browser headers is served").to.equal(200);
  });

  it("a lease read from another site is 403: it would take the key's lease (an <img> held hot keys' leases for 60 s)", async () => {
    const taken = await call(`${n.api}/v1/cache/hot?lease=60s`, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-dest": "image" } });
    expectEnvelope(taken, 403, "FORBIDDEN");
    expect(taken.headers["x-cache-lease"]).to.equal(undefined);
    const mine = await call(`${n.api}/v1/cache/hot?lease=5s`);
    expect(mine.status).to.equal(404);
    expect(mine.headers["x-cache-lease"], "the lease was free for this caller").to.be.a("string");
  });

  it("reads from another site, the node's own pages and programs without Origin are served", async () => {
    expect((await call(`${n.api}/v1/cache/k0`, { headers: EVIL })).status).to.equal(200);
    const own = new URL(n.mgmt);
    expect((await call(`${n.mgmt}/evict`, { method: "POST", headers: { origin: own.origin, "sec-fetch-site": "same-origin" } })).status).to.equal(200);
    expect((await call(`${n.api}/v1/cache/k1`, { method: "PUT", headers: { origin: new URL(n.api).origin }, body: "w" })).status).to.equal(200);
    expect((await call(`${n.mgmt}/clear`, { method: "POST" })).status).to.equal(200);
    expect(await items()).to.equal(0);
  });
});
