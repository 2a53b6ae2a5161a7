// Stampede leases on three real nodes (replication 3), from outside over HTTP: 200 concurrent
// lease GETs of a cold key through every node get exactly one loader (one token) and the others
// the value once it fills; an unfilled lease passes to a new loader after it expires (and to a
// waiting reader); a delete before the fill makes the fill 409; LEASE_HELD carries Retry-After;
// a holder's release passes the lease on at once; every malformed `lease`, `wait` or
// X-Cache-Lease is 400 with the envelope.
import { expect } from "chai";
import { startCluster, type NodeProcess } from "../helpers/node-process.js";
import { call, type Reply } from "../helpers/http-call.js";
import { RawConnection, type RawResponse } from "../helpers/raw-http.js";

/** One request to `node`'s client API on a fresh connection. */
function send(node: NodeProcess, method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return call(`${node.api}${path}`, { method, ...init });
}

const code = (r: Reply) => r.json<{ code: string }>().code;

const item = (key: string) => `/v1/cache/${encodeURIComponent(key)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A PUT whose headers are sent byte for byte as given (fetch drops or merges some). */
async function rawPut(node: NodeProcess, path: string, headers: Array<[string, string]>): Promise<RawResponse> {
  const conn = await RawConnection.open(node.apiPort);
  try {
    const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join("");
    await conn.write(`PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}Content-Length: 1\r\nConnection: close\r\n\r\nv`);
    return await conn.read();
  } finally {
    conn.socket.destroy();
  }
}

describe("stampede leases across three real processes", function () {
  this.timeout(60_000);
  let nodes: NodeProcess[];
  const pick = (i: number) => nodes[i % nodes.length] as NodeProcess;

  before(async () => {
    ({ nodes } = await startCluster(3));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("200 concurrent lease GETs of a cold key through every node: exactly one loader gets a token; after its fill the other 199 get the value", async () => {
    const key = "stampede";
    let loader: Reply | undefined;
    const answers = Array.from({ length: 200 }, (_, i) =>
      send(pick(i), "GET", `${item(key)}?lease=10s&wait=8s`).then((a) => {
        if (a.headers["x-cache-lease"] !== undefined) loader ??= a;
        return a;
      }),
    );
    for (let i = 0; i < 200 && loader === undefined; i++) await sleep(25);
    expect(loader, "a loader within 5 s").not.to.equal(undefined);
    expect(loader?.status).to.equal(404);
    expect(code(loader as Reply)).to.equal("NOT_FOUND");
    // The loader "loads" and fills through another node than the one it asked.
    const fillRes = await send(pick(1), "PUT", item(key), { headers: { "X-Cache-Lease": loader?.headers["x-cache-lease"] as string }, body: "loaded once" });
    expect(fillRes.status, fillRes.body.toString()).to.equal(200);
    const all = await Promise.all(answers);
    const tokens = all.map((a) => a.headers["x-cache-lease"]).filter((t) => t !== undefined);
    expect(tokens).to.have.length(1);
    const others = all.filter((a) => a !== loader);
    expect(others.map((a) => a.status)).to.deep.equal(Array(199).fill(200));
    expect(new Set(others.map((a) => a.body.toString()))).to.deep.equal(new Set(["loaded once"]));
    // A lease read of a filled key is a plain hit, with the item headers.
    const hit = await send(pick(2), "GET", `${item(key)}?lease=10s`);
    expect(hit.status).to.equal(200);
    expect(hit.body.toString()).to.equal("loaded once");
    expect(hit.headers.etag).to.be.a("string");
  });

  it("an unfilled lease passes on after it expires: meanwhile LEASE_HELD with Retry-After, then a new token; the old token's fill is 409 and stores nothing", async () => {
    const key = "expiring";
    const first = await send(pick(0), "GET", `${item(key)}?lease=400ms`);
    const token = first.headers["x-cache-lease"];
    expect(first.status).to.equal(404);
    expect(token).to.be.a("string");
    const held = await send(pick(1), "GET", `${item(key)}?lease=10s&wait=0s`);
    expect(held.status).to.equal(404);
    expect(code(held)).to.equal("LEASE_HELD");
    expect(held.headers["retry-after"]).to.equal("1");
    const retryAfterMs = held.json<{ details: { retry_after_ms: number } }>().details.retry_after_ms;
    expect(retryAfterMs).to.be.within(1, 400);
    expect(Number.isInteger(retryAfterMs), `retry_after_ms ${retryAfterMs} is whole milliseconds`).to.equal(true);
    // A reader waiting across the expiry takes the lease over.
    const waiter = await send(pick(2), "GET", `${item(key)}?lease=5s&wait=3s`);
    expect(waiter.status).to.equal(404);
    const second = waiter.headers["x-cache-lease"];
    expect(second).to.be.a("string").and.not.equal(token);
    const late = await send(pick(0), "PUT", item(key), { headers: { "X-Cache-Lease": token as string }, body: "too late" });
    expect(late.status).to.equal(409);
    expect(code(late)).to.equal("CONFLICT");
    expect((await send(pick(1), "GET", `${item(key)}?consistency=all`)).status).to.equal(404);
    expect((await send(pick(1), "PUT", item(key), { headers: { "X-Cache-Lease": second as string }, body: "second" })).status).to.equal(200);
    expect((await send(pick(2), "GET", `${item(key)}?consistency=all`)).body.toString()).to.equal("second");
  });

  it("a delete before the fill makes the fill 409 CONFLICT: nothing is stored, and the next lease read gets a new lease", async () => {
    const key = "deleted-meanwhile";
    const lease = await send(pick(2), "GET", `${item(key)}?lease=10s`);
    const token = lease.headers["x-cache-lease"] as string;
    expect(token).to.be.a("string");
    expect((await send(pick(0), "DELETE", item(key))).status).to.equal(200);
    const fill = await send(pick(1), "PUT", item(key), { headers: { "X-Cache-Lease": token }, body: "stale" });
    expect(fill.status).to.equal(409);
    expect(code(fill)).to.equal("CONFLICT");
    for (const n of nodes) expect((await send(n, "GET", `${item(key)}?consistency=one`)).status, n.id).to.equal(404);
    const again = await send(pick(0), "GET", `${item(key)}?lease=10s`);
    expect(again.headers["x-cache-lease"]).to.be.a("string").and.not.equal(token);
  });

  it("a holder whose load failed releases its lease (DELETE /v1/cache/{key}/lease) through a node that is not the primary: a waiter through the third node gets a new token at once; a second release is 409", async () => {
    const key = "release-me";
    const owners = (await send(pick(0), "GET", `/v1/owners/${encodeURIComponent(key)}`)).json<{ owners: string[] }>().owners;
    const [holderVia, waiterVia] = nodes.filter((n) => n.id !== owners[0]) as [NodeProcess, NodeProcess];
    const lease = await send(holderVia, "GET", `${item(key)}?lease=20s`);
    const token = lease.headers["x-cache-lease"] as string;
    expect(token).to.be.a("string");
    const started = Date.now();
    const waiter = send(waiterVia, "GET", `${item(key)}?lease=20s&wait=10s`);
    await sleep(200);
    const release = await send(holderVia, "DELETE", `${item(key)}/lease`, { headers: { "X-Cache-Lease": token } });
    expect(release.status, release.body.toString()).to.equal(204);
    const next = await waiter;
    expect(next.status).to.equal(404);
    expect(next.headers["x-cache-lease"]).to.be.a("string").and.not.equal(token);
    expect(Date.now() - started, "well before the 20 s lease or the 10 s wait ran out").to.be.below(5_000);
    const again = await send(waiterVia, "DELETE", `${item(key)}/lease`, { headers: { "X-Cache-Lease": token } });
    expect(again.status).to.equal(409);
    expect(code(again)).to.equal("CONFLICT");
    expect((await send(holderVia, "PUT", item(key), { headers: { "X-Cache-Lease": token }, body: "stale" })).status).to.equal(409);
    const filled = await send(holderVia, "PUT", item(key), { headers: { "X-Cache-Lease": next.headers["x-cache-lease"] as string }, body: "second loader" });
    expect(filled.status).to.equal(200);
    // Nothing was deleted by the release: the value of the fill after it stands.
    expect((await send(pick(0), "GET", `${item(key)}?consistency=all`)).body.toString()).to.equal("second loader");
    // A release without a token, or with a malformed one, is 400 and changes nothing.
    for (const headers of [{}, { "X-Cache-Lease": "has space" }, { "X-Cache-Lease": "x".repeat(65) }] as Array<Record<string, string>>) {
      const r = await send(pick(0), "DELETE", `${item(key)}/lease`, { headers });
      expect(r.status, JSON.stringify(headers)).to.equal(400);
      expect(code(r)).to.equal("BAD_REQUEST");
    }
    expect((await send(pick(0), "GET", item(key))).status).to.equal(200);
  });

  it("every malformed lease, wait or X-Cache-Lease is 400 with the envelope", async () => {
    const n = nodes[0] as NodeProcess;
    const queries = ["lease=abc", "lease=10", "lease=99ms", "lease=61s", "lease=-1s", "lease=", "lease=10s&lease=5s", "wait=1s", "lease=10s&wait=10001ms", "lease=10s&wait=x", "lease=10s&wait=2s&wait=1s"];
    for (const q of queries) {
      const r = await send(n, "GET", `${item("m")}?${q}`);
      expect(r.status, q).to.equal(400);
      expect(code(r), q).to.equal("BAD_REQUEST");
      expect((await send(n, "HEAD", `${item("m")}?${q}`)).status, `HEAD ${q}`).to.equal(400);
    }
    // The limits themselves are accepted.
    for (const q of ["lease=100ms&wait=0s", "lease=60s&wait=10s", "lease=1m"]) expect((await send(n, "GET", `${item(`ok-${q}`)}?${q}`)).status, q).to.equal(404);
    const tokens: Array<Array<[string, string]>> = [
      [["X-Cache-Lease", "has space"]],
      [["X-Cache-Lease", "x".repeat(65)]],
      [["X-Cache-Lease", ""]],
      [["X-Cache-Lease", "a,b"]],
      [["X-Cache-Lease", "a"], ["X-Cache-Lease", "b"]],
    ];
    for (const headers of tokens) {
      const r = await rawPut(n, item("m"), headers);
      expect(r.status, JSON.stringify(headers)).to.equal(400);
      expect(r.json().code).to.equal("BAD_REQUEST");
    }
    // A well-formed token that names no lease is a conflict, and stores nothing.
    expect((await send(n, "PUT", item("m"), { headers: { "X-Cache-Lease": "1.nosuchlease" }, body: "v" })).status).to.equal(409);
    expect((await send(n, "GET", `${item("m")}?consistency=all`)).status).to.equal(404);
  });
});
