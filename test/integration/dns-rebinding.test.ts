// DNS rebinding against a real node that needs no credential. A page on attacker.example that
// rebinds its name to the node's address is, for the browser, the node's own origin: Origin and
// Sec-Fetch-Site say "same origin", so the cross-site check passes, and before this guard the page
// read every value and wrote keys (a review found it and left it). What the page cannot change is
// Host: a browser request without a credential to a name the node does not answer to is now 403.
import { expect } from "chai";
import { call } from "../helpers/http-call.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const TOKEN = "rebinding-token-0123456789abcdef0123456789";

/** What a browser sends from a page on attacker.example:port after the rebinding (same origin). */
function rebound(port: string, extra: Record<string, string> = {}): Record<string, string> {
  return { host: `attacker.example:${port}`, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "user-agent": "Mozilla/5.0 (X11; Linux x86_64)", ...extra };
}

describe("integration/DNS rebinding", function () {
  this.timeout(60_000);
  const nodes: NodeProcess[] = [];
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });

  it("a node without credentials: browser requests to another name are 403 host_not_allowed on both listeners and both paths; its own names and programs are served", async () => {
    const n = await startNode({ id: "rebind-1" });
    nodes.push(n);
    const apiPort = new URL(n.api).port;
    const mgmtPort = new URL(n.mgmt).port;
    expect((await call(`${n.api}/v1/cache/secret`, { method: "PUT", body: "s3cret" })).status).to.equal(200);
    // The hot item routes (read and write), a Koa route of the client listener, the management listener.
    const refused = [
      await call(`${n.api}/v1/cache/secret`, { headers: rebound(apiPort) }),
      await call(`${n.api}/v1/cache/planted`, { method: "PUT", headers: rebound(apiPort, { origin: `http://attacker.example:${apiPort}` }), body: "x" }),
      await call(`${n.api}/v1/cache/batch/get`, { method: "POST", headers: rebound(apiPort, { "content-type": "application/json" }), body: '{"keys":["secret"]}' }),
      await call(`${n.mgmt}/stats`, { headers: rebound(mgmtPort) }),
      // An older browser without Sec-Fetch-*: its User-Agent still says what it is.
      await call(`${n.api}/v1/cache/secret`, { headers: { host: `attacker.example:${apiPort}`, "user-agent": "Mozilla/5.0 (Macintosh) Safari/605.1.15" } }),
    ];
    for (const r of refused) {
      const body = expectEnvelope(r, 403, "FORBIDDEN", /DNS rebinding/);
      expect(body.details).to.deep.equal({ reason: "host_not_allowed", host: `attacker.example:${r === refused[3] ? mgmtPort : apiPort}` });
      expect(r.body.toString()).not.to.include("s3cret");
    }
    expect((await call(`${n.api}/v1/cache/planted`)).status, "nothing written").to.equal(404);
    // The node's own names: an IP address, localhost, a subdomain of localhost.
    for (const host of [`127.0.0.1:${apiPort}`, `localhost:${apiPort}`, `dash.localhost:${apiPort}`, `[::1]:${apiPort}`]) {
      const r = await call(`${n.api}/v1/cache/secret`, { headers: rebound(apiPort, { host }) });
      expect([host, r.status, r.body.toString()]).to.deep.equal([host, 200, "s3cret"]);
    }
    // A program (no browser headers) may use any name: a Kubernetes Service name, say. Node's own
    // fetch sends sec-fetch-mode (only) and user-agent "node".
    const programs: Record<string, string>[] = [{ "user-agent": "curl/8.0" }, { "sec-fetch-mode": "cors", "user-agent": "node", "accept-language": "*" }];
    for (const headers of programs) {
      const program = await call(`${n.api}/v1/cache/secret`, { headers: { host: `cache.default.svc:${apiPort}`, ...headers } });
      expect([program.status, program.body.toString()]).to.deep.equal([200, "s3cret"]);
    }
  });

  it("SERVICE_ALLOWED_HOSTS adds names (.suffix: with subdomains); a caller with a credential is served whatever the name", async () => {
    const n = await startNode({ id: "rebind-2", env: { SERVICE_ALLOWED_HOSTS: "cache.example.com, .internal.example", SERVICE_AUTH_TOKEN: TOKEN } });
    nodes.push(n);
    const apiPort = new URL(n.api).port;
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await call(`${n.api}/v1/cache/k`, { method: "PUT", headers: auth, body: "v" })).status).to.equal(200);
    const withCredential = await call(`${n.api}/v1/cache/k`, { headers: rebound(apiPort, auth) });
    expect([withCredential.status, withCredential.body.toString()], "a rebound page has no credential of the real origin").to.deep.equal([200, "v"]);
    const anonymous = await call(`${n.api}/v1/cache/k`, { headers: rebound(apiPort) });
    expect(anonymous.status, "no credential, no anonymous access: 401 as before").to.equal(401);
    const n3 = await startNode({ id: "rebind-3", env: { SERVICE_ALLOWED_HOSTS: "cache.example.com,.internal.example" } });
    nodes.push(n3);
    const p3 = new URL(n3.api).port;
    for (const [host, status] of [[`cache.example.com:${p3}`, 404], [`internal.example:${p3}`, 404], [`a.b.internal.example:${p3}`, 404], [`evil-internal.example:${p3}`, 403], [`cache.example.com.evil:${p3}`, 403]] as const) {
      const r = await call(`${n3.api}/v1/cache/absent`, { headers: rebound(p3, { host }) });
      expect([host, r.status]).to.deep.equal([host, status]);
    }
  });

  it("a malformed SERVICE_ALLOWED_HOSTS does not start (exit 2)", async () => {
    const bad = await startNode({ id: "rebind-4", env: { SERVICE_ALLOWED_HOSTS: "ok.example,http://x" }, readyMessage: false });
    expect(await bad.exited).to.equal(2);
    expect(bad.stderr.join("")).to.match(/SERVICE_ALLOWED_HOSTS/);
  });
});
