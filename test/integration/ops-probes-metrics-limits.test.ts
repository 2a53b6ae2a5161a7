// Running it in production, from outside, on two real nodes with authentication, a peer token
// and rate limits: /readyz reports each of its states (a node whose seed is down stays up and not
// ready, joins once the seed starts, and turns unready when it drains); /metrics passes promtool
// and shows a known mix of hits and misses; `buf curl` lists and calls the peer methods through
// server reflection with no schema; a limited identity gets 429 with Retry-After and RateLimit-*
// and succeeds after waiting, while other identities, probes and replication are unaffected.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { eventually, FAST_TIMERS, sleep } from "./cluster-helpers.js";
import { parsePrometheus } from "./observability-helpers.js";

const run = promisify(execFile);
const BUF = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const PEER_TOKEN = "peer-secret-ops";
const OTHER = "tok-other";
const LIMITED = "tok-limited";
const BATCHER = "tok-batcher";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function get(url: string, token?: string): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const res = await fetch(url, { headers: token ? bearer(token) : {} });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const checksOf = (body: Record<string, unknown>) => body.checks as Record<"bound" | "not_draining" | "joined" | "caught_up", { ok: boolean; detail: string }>;

describe("integration/ops: probes, metrics, reflection and rate limits", function () {
  this.timeout(120_000);
  let dir: string;
  let layout: ClusterPorts[];
  let n1: NodeProcess;
  let n2: NodeProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hc-ops-"));
    const policy = join(dir, "auth.yaml");
    writeFileSync(
      policy,
      `tokens:\n  - {id: other, token: ${OTHER}, scopes: [read, write, admin]}\n  - {id: limited, token: ${LIMITED}, scopes: [read, write], rate_limit: 1, rate_burst: 2}\n  - {id: batcher, token: ${BATCHER}, scopes: [read], rate_limit: 1, rate_burst: 20}\n`,
    );
    layout = await clusterPorts(2);
    const env = {
      ...FAST_TIMERS,
      SERVICE_AUTH_CONFIG: policy,
      SERVICE_PEER_TOKEN: PEER_TOKEN,
      SERVICE_RATE_LIMIT: "5",
      SERVICE_RATE_BURST: "40",
      SERVICE_READY_CATCHUP_TIMEOUT: "2s",
    };
    // n1 first: its only seed (n2) is down.
    n1 = await startMember(layout, "n1", env);
    (layout as Array<ClusterPorts & { env?: Record<string, string> }>).forEach((p) => (p.env = env));
  });

  after(async () => {
    await Promise.all([n1, n2].filter((n) => n !== undefined).map((n) => n.stop("SIGKILL")));
    rmSync(dir, { recursive: true, force: true });
  });

  it("/readyz: a node whose seed is down stays up and not ready (joined fails; caught_up passes after SERVICE_READY_CATCHUP_TIMEOUT)", async () => {
    const first = await get(`${n1.mgmt}/readyz`);
    expect(first.status).to.equal(503);
    expect(first.json.status).to.equal("not_ready");
    expect(checksOf(first.json).bound.ok).to.equal(true);
    expect(checksOf(first.json).not_draining.ok).to.equal(true);
    expect(checksOf(first.json).joined).to.deep.equal({ ok: false, detail: "no seed or peer has answered yet" });
    await sleep(2500);
    const later = await get(`${n1.mgmt}/readyz`);
    expect(later.status, "still not ready: not joined").to.equal(503);
    expect(checksOf(later.json).caught_up.ok).to.equal(true);
    expect((await get(`${n1.mgmt}/livez`)).status, "alive all along (no crash loop)").to.equal(200);
  });

  it("/readyz: ready once the seed starts and answers", async () => {
    n2 = await startMember(layout, "n2", (layout[1] as ClusterPorts & { env: Record<string, string> }).env);
    const ready = await eventually(() => get(`${n1.mgmt}/readyz`), (r) => r.status === 200, 15_000);
    expect(ready.json.status).to.equal("ready");
    expect(Object.values(checksOf(ready.json)).every((c) => c.ok)).to.equal(true);
    await eventually(() => get(`${n2.mgmt}/readyz`), (r) => r.status === 200, 15_000);
  });

  it("/metrics passes promtool check metrics and counts a known mix of hits and misses", async () => {
    expect((await fetch(`${n1.api}/v1/cache/known`, { method: "PUT", headers: bearer(OTHER), body: "v" })).status).to.equal(200);
    for (let i = 0; i < 3; i++) expect((await get(`${n1.api}/v1/cache/known`, OTHER)).status).to.equal(200);
    for (let i = 0; i < 2; i++) expect((await get(`${n1.api}/v1/cache/absent-${i}`, OTHER)).status).to.equal(404);
    const res = await fetch(`${n1.mgmt}/metrics`, { headers: bearer(OTHER) });
    const text = await res.text();
    const prom = parsePrometheus(text);
    const value = (name: string, labels: Record<string, string> = {}) => prom.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value("cache_gets_total", { result: "hit" })).to.equal(3);
    expect(value("cache_gets_total", { result: "miss" })).to.equal(2);
    expect(value("http_server_request_duration_seconds_count", { http_route: "/v1/cache/{key}", http_request_method: "GET", http_response_status_code: "404" })).to.equal(2);
    // The store's off-heap bytes reach the exporter from the running node (the key just stored).
    expect(value("cache_store_memory_bytes", { part: "records" })).to.be.greaterThan(0);
    for (const part of ["garbage", "free", "large"]) expect(value("cache_store_memory_bytes", { part }), part).to.be.a("number");
    const promtool = await new Promise<{ code: number; out: string }>((resolve) => {
      const child = execFile("promtool", ["check", "metrics"], (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }));
      child.stdin?.end(text);
    });
    expect(promtool, "promtool check metrics (install Debian prometheus --no-install-recommends)").to.deep.equal({ code: 0, out: "" });
  });

  it("buf curl with no --schema lists the peer methods and calls one through server reflection, behind the peer token", async () => {
    const base = `${n1.dist}/internal`;
    const auth = ["-H", `Authorization: Bearer ${PEER_TOKEN}`, "--reflect-header", "*", "--http2-prior-knowledge"];
    const methods = (await run(BUF, ["curl", ...auth, "--list-methods", base])).stdout.split("\n");
    expect(methods).to.include.members(["hypercache.peer.v1.PeerService/Health", "hypercache.peer.v1.PeerService/HandOffHints", "hypercache.peer.v1.PeerService/Gossip"]);
    const alpha = (await run(BUF, ["curl", ...auth, "--reflect-protocol", "grpc-v1alpha", "--list-services", base])).stdout;
    expect(alpha).to.include("hypercache.peer.v1.PeerService");
    const health = JSON.parse((await run(BUF, ["curl", ...auth, "--protocol", "grpc", "-d", "{}", `${base}/hypercache.peer.v1.PeerService/Health`])).stdout) as { node: string };
    expect(health.node).to.equal("n1");
    const refused = await run(BUF, ["curl", "--http2-prior-knowledge", "--list-services", base]).then(
      () => "listed",
      () => "refused",
    );
    expect(refused, "reflection sits behind the peer token").to.equal("refused");
  });

  it("a limited identity gets 429 with Retry-After and RateLimit-*, then succeeds after Retry-After; other identities and probes are unaffected", async () => {
    const statuses: number[] = [];
    let limitedAnswer: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 3; i++) {
      const r = await get(`${n1.api}/v1/me`, LIMITED);
      statuses.push(r.status);
      if (r.status === 429) limitedAnswer = r;
    }
    expect(statuses).to.deep.equal([200, 200, 429]);
    const h = limitedAnswer?.headers;
    expect(limitedAnswer?.json).to.deep.include({ code: "TOO_MANY_REQUESTS" });
    expect(Number(h?.get("retry-after"))).to.be.within(1, 2);
    expect(h?.get("ratelimit-limit")).to.equal("2");
    expect(h?.get("ratelimit-remaining")).to.equal("0");
    expect(Number(h?.get("ratelimit-reset"))).to.be.within(1, 2);
    for (let i = 0; i < 5; i++) expect((await get(`${n1.api}/v1/me`, OTHER)).status, "another identity").to.equal(200);
    for (const path of ["/livez", "/readyz", "/health"]) for (let i = 0; i < 15; i++) expect((await get(`${n1.mgmt}${path}`)).status, path).to.equal(200);
    for (let i = 0; i < 15; i++) expect((await get(`${n1.api}/healthz`)).status).to.equal(200);
    await sleep(Number(h?.get("retry-after")) * 1000);
    expect((await get(`${n1.api}/v1/me`, LIMITED)).status, "after Retry-After").to.equal(200);
  });

  it("a batch pays ceil(items / 10) tokens: 300 keys (cost 30) leave a burst of 20 in debt, so the next request waits about 11 s", async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `cost-${i}`);
    const res = await fetch(`${n1.api}/v1/cache/batch/get`, { method: "POST", headers: { ...bearer(BATCHER), "content-type": "application/json" }, body: JSON.stringify({ keys }) });
    expect(res.status, "the batch itself is admitted on the token taken at authentication").to.equal(200);
    const next = await get(`${n1.api}/v1/me`, BATCHER);
    expect(next.status, "a batch charged as one request would leave 19 tokens").to.equal(429);
    expect(Number(next.headers.get("retry-after"))).to.be.within(9, 12);
  });

  it("replication is unaffected: a batch of 30 writes (cost 3) reaches the other owner through the peer port", async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ key: `repl-${i}`, value: `v${i}` }));
    const res = await fetch(`${n1.api}/v1/cache/batch/put`, { method: "POST", headers: { ...bearer(OTHER), "content-type": "application/json" }, body: JSON.stringify({ items }) });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { results: Array<{ status: number }> };
    expect(body.results.every((r) => r.status === 200)).to.equal(true);
    const onN2 = await fetch(`${n2.dist}/internal/hypercache.peer.v1.PeerService/Get`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${PEER_TOKEN}` },
      body: JSON.stringify({ keys: items.map((i) => i.key) }),
    });
    const found = ((await onN2.json()) as { results: Array<{ found?: boolean }> }).results.filter((r) => r.found).length;
    expect(found).to.equal(30);
  });

  it("/readyz: a draining node is not ready (not_draining fails), /livez stays 200", async () => {
    expect((await fetch(`${n2.mgmt}/dist/drain`, { method: "POST", headers: bearer(OTHER) })).status).to.equal(200);
    const r = await get(`${n2.mgmt}/readyz`);
    expect(r.status).to.equal(503);
    expect(checksOf(r.json).not_draining).to.deep.equal({ ok: false, detail: "draining: writes go to other nodes" });
    expect((await get(`${n2.mgmt}/livez`)).status).to.equal(200);
    const drain = await get(`${n2.mgmt}/dist/drain`, OTHER);
    expect(drain.json.state).to.equal("draining");
  });
});
