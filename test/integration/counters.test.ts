// Counters on three real nodes (replication 3): 20 clients x 500 increments through every node
// leave 10,000 on every node with all returned values distinct; GET answers decimal text;
// Idempotency-Key; If-Match (one 200 per ETag, 412 with the current ETag); 409 for a
// non-integer value; 400 for every malformed new field or header.
import { expect } from "chai";
import { startCluster, type NodeProcess } from "../helpers/node-process.js";

async function post(node: NodeProcess, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown>; etag: string | null }> {
  const res = await fetch(`${node.api}${path}`, { method: "POST", headers: body === undefined ? headers : { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown>, etag: res.headers.get("etag") };
}

describe("counters across three real processes", function () {
  this.timeout(90_000);
  let nodes: NodeProcess[];

  before(async () => {
    ({ nodes } = await startCluster(3, { SERVICE_HINT_REPLAY: "100ms" }));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("20 clients x 500 increments through every node leave 10000 on every node, and all 10000 returned values are distinct", async () => {
    const values: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, client) => {
        for (let i = 0; i < 500; i++) {
          const r = await post(nodes[(client + i) % 3] as NodeProcess, "/v1/cache/hits/incr");
          expect(r.status, JSON.stringify(r.json)).to.equal(200);
          values.push(r.json.value as number);
        }
      }),
    );
    expect(new Set(values).size).to.equal(10_000);
    expect(Math.max(...values)).to.equal(10_000);
    for (const n of nodes) {
      const res = await fetch(`${n.api}/v1/cache/hits?consistency=one`);
      expect(await res.text(), n.id).to.equal("10000");
    }
  });

  it("initial, delta, Idempotency-Key retries, 409 for a non-integer value, and a PUT starting a new generation", async () => {
    const [a, b] = nodes as [NodeProcess, NodeProcess];
    expect((await post(a, "/v1/cache/c1/incr", { initial: 10, delta: 5 })).json).to.include({ value: 15 });
    const first = await post(a, "/v1/cache/c1/incr", { delta: 2 }, { "Idempotency-Key": "retry-1" });
    const again = await post(b, "/v1/cache/c1/incr", { delta: 2 }, { "Idempotency-Key": "retry-1" });
    expect(first.json.value).to.equal(17);
    expect(again.json).to.deep.equal(first.json);
    await fetch(`${a.api}/v1/cache/text`, { method: "PUT", body: "abc" });
    const conflict = await post(b, "/v1/cache/text/incr");
    expect(conflict.status).to.equal(409);
    expect(conflict.json.code).to.equal("CONFLICT");
    await fetch(`${a.api}/v1/cache/c1`, { method: "PUT", body: "100" });
    expect((await post(b, "/v1/cache/c1/incr")).json.value).to.equal(101);
    expect((await post(a, "/v1/cache/big/incr", { initial: 9007199254740991 })).status).to.equal(409);
  });

  it("an Idempotency-Key reused with another request on the same key is 409 CONFLICT and adds nothing (it answered the first result: the +100 was lost)", async () => {
    const [a, b] = nodes as [NodeProcess, NodeProcess];
    const first = await post(a, "/v1/cache/reuse/incr", { delta: 1 }, { "Idempotency-Key": "reuse-1" });
    expect(first.json).to.include({ value: 1 });
    for (const via of [a, b]) {
      const other = await post(via, "/v1/cache/reuse/incr", { delta: 100 }, { "Idempotency-Key": "reuse-1" });
      expect(other.status, JSON.stringify(other.json)).to.equal(409);
      expect(other.json).to.deep.include({ code: "CONFLICT", details: { reason: "idempotency_key_reused" } });
    }
    expect((await post(b, "/v1/cache/reuse/incr", { delta: 1 }, { "Idempotency-Key": "reuse-1" })).json, "the same request: the first result").to.deep.equal(first.json);
    expect(await (await fetch(`${a.api}/v1/cache/reuse?consistency=quorum`)).text()).to.equal("1");
  });

  it("an empty chunked body adds 1, as an absent body does, with or without a JSON content type", async () => {
    const http = await import("node:http");
    const n = nodes[0] as NodeProcess;
    const chunkedEmpty = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${n.api}/v1/cache/chunked-empty/incr`, { method: "POST", headers: { "transfer-encoding": "chunked", ...headers } }, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const first = await chunkedEmpty({ "content-type": "application/json" });
    expect(first.status, first.body).to.equal(200);
    expect(JSON.parse(first.body)).to.include({ value: 1 });
    const second = await chunkedEmpty({});
    expect(second.status, second.body).to.equal(200);
    expect(JSON.parse(second.body)).to.include({ value: 2 });
  });

  it("every malformed new field or header is 400 with the envelope", async () => {
    const n = nodes[0] as NodeProcess;
    for (const body of [{ delta: 1.5 }, { delta: "1" }, { initial: 2 ** 53 }, { ttl: "soon" }, { extra: 1 }, []]) {
      const r = await post(n, "/v1/cache/m/incr", body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.json.code).to.equal("BAD_REQUEST");
    }
    // 1e400 parses as Infinity: the message names it (it said "got null")
    const huge = await fetch(`${n.api}/v1/cache/m/incr`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"delta":1e400}' });
    const hugeBody = (await huge.json()) as { code: string; error: string };
    expect([huge.status, hugeBody.code]).to.deep.equal([400, "BAD_REQUEST"]);
    expect(hugeBody.error).to.equal("delta must be an integer within ±(2^53 - 1); got Infinity");
    const bad: Array<Record<string, string>> = [
      { "Idempotency-Key": "with space" },
      { "Idempotency-Key": "x".repeat(257) },
      { "If-Match": "no-quotes" },
      { "If-Match": '"a", b' },
      { "If-None-Match": "*" },
      { "If-Match": "*", "If-None-Match": "*" },
    ];
    for (const headers of bad) {
      const r = await post(n, "/v1/cache/m/incr", {}, headers);
      expect(r.status, JSON.stringify(headers)).to.equal(400);
      expect(r.json.code).to.equal("BAD_REQUEST");
    }
    expect((await post(n, "/v1/cache/m/incr?consistency=one", {}, { "If-Match": "*" })).status).to.equal(400);
    const put = await fetch(`${n.api}/v1/cache/m`, { method: "PUT", body: "\u0000hc-counter/1\u0000{}" });
    expect(put.status).to.equal(400);
  });

  it("If-Match on incr: 30 concurrent increments on one ETag through every node give one 200 and 29 412s with the winner's ETag; a stale ETag adds nothing", async () => {
    const [a, b, c] = nodes as [NodeProcess, NodeProcess, NodeProcess];
    const start = await post(a, "/v1/cache/cas-ctr/incr", { initial: 100, delta: 0 });
    expect(start.status).to.equal(200);
    expect(start.etag).to.be.a("string");
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => post(nodes[i % 3] as NodeProcess, "/v1/cache/cas-ctr/incr", {}, { "If-Match": start.etag as string })));
    const wins = answers.filter((r) => r.status === 200);
    expect(wins, JSON.stringify(answers.map((r) => r.status))).to.have.length(1);
    expect(wins[0]?.json.value).to.equal(101);
    for (const r of answers.filter((x) => x.status !== 200)) {
      expect(r.status).to.equal(412);
      expect(r.json.code).to.equal("PRECONDITION_FAILED");
      expect((r.json.details as Record<string, unknown>).current_etag).to.equal(wins[0]?.etag);
    }
    const stale = await post(b, "/v1/cache/cas-ctr/incr", { delta: 5 }, { "If-Match": start.etag as string });
    expect(stale.status).to.equal(412);
    const read = await fetch(`${c.api}/v1/cache/cas-ctr?consistency=quorum`);
    expect(await read.text()).to.equal("101");
    expect(read.headers.get("etag")).to.equal(wins[0]?.etag);
    const next = await post(c, "/v1/cache/cas-ctr/incr", { delta: 5 }, { "If-Match": `"other", ${wins[0]?.etag as string}` });
    expect(next.json.value).to.equal(106);
    expect((await post(a, "/v1/cache/no-such-ctr/incr", {}, { "If-Match": "*" })).status).to.equal(412);
  });

  it("touch and DELETE of a counter answer bytes as GET shows it: the length of its decimal text", async () => {
    const [a, b] = nodes as [NodeProcess, NodeProcess];
    expect((await post(a, "/v1/cache/sized/incr", { initial: 12_340, delta: 5 })).json.value).to.equal(12_345);
    const touched = await post(b, "/v1/cache/sized/touch", { ttl: "1h" });
    expect(touched.json).to.include({ bytes: 5, stored: true });
    const deleted = await fetch(`${a.api}/v1/cache/sized`, { method: "DELETE" });
    expect(await deleted.json()).to.include({ bytes: 5, deleted: true });
  });
});
