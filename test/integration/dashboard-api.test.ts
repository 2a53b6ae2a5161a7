// The data routes of the dashboard on the management listener of a real 3-node cluster with a
// policy file: GET /cluster/ring, /dist/hints, /cluster/keys and /cluster/keys/{key}/replicas,
// with their answers, their 400s and their scopes (401 without a credential, 403 without read or
// admin). The last part SIGSTOPs an owner: its copy shows as unreachable within the per-owner
// timeout, and hints pile up for it.
import { HINT_OVERHEAD_BYTES } from "../../src/core/limits.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { expectForbidden, expectUnauthorized } from "../helpers/auth-expect.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { bearer, call, type Reply } from "../helpers/http-call.js";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { HashRing } from "../../src/ring/index.js";
import { FAST_TIMERS, allAlive, eventually, type MembersBody } from "./cluster-helpers.js";
import { parseSseBlock } from "./observability-helpers.js";

type Json = Record<string, unknown>;

const PEER_TOKEN = "dash-peer-secret";
const TOKENS = { reader: "tok-dash-reader", writer: "tok-dash-writer", admin: "tok-dash-admin", nobody: "tok-dash-none" } as const;
const POLICY = [
  "tokens:",
  `  - {id: reader, token: ${TOKENS.reader}, scopes: [read]}`,
  `  - {id: writer, token: ${TOKENS.writer}, scopes: [write]}`,
  `  - {id: admin, token: ${TOKENS.admin}, scopes: [admin]}`,
  `  - {id: nobody, token: ${TOKENS.nobody}, scopes: []}`,
].join("\n");

let dir: string;
let layout: ClusterPorts[];
let nodes: NodeProcess[];

const node = (id: string) => nodes.find((n) => n.id === id) as NodeProcess;
const mgmt = (n: NodeProcess, path: string, token: string = TOKENS.reader) => call(`${n.mgmt}${path}`, { headers: bearer(token) });

/** A 200 JSON answer, parsed. */
function ok<T = Json>(r: Reply, what = ""): T {
  expect(r.status, `${what} ${r.body.toString("utf8").slice(0, 300)}`).to.equal(200);
  expect(r.headers["content-type"]).to.match(/^application\/json/);
  return r.json<T>();
}

interface RingBody {
  node: string;
  membership_version: number;
  replication: number;
  virtual_nodes: number;
  nodes: Array<{ id: string; primary_share: number; owner_share: number }>;
}

/** Waits until every node lists the three nodes alive (the helpers of cluster-helpers call without a credential). */
async function waitAllAliveWithToken(): Promise<void> {
  const ids = layout.map((p) => p.id);
  const views = await eventually(
    () => Promise.all(nodes.map(async (n) => ok<MembersBody>(await mgmt(n, "/cluster/members")))),
    (vs) => vs.every((v) => allAlive(v, ids)),
    15_000,
    50,
  );
  for (const v of views) expect(allAlive(v, ids), JSON.stringify(v)).to.equal(true);
}

interface KeyPage {
  keys: string[];
  next_cursor: string;
  total_matched: number;
  truncated: boolean;
  node: string;
  partial_nodes: string[];
}

interface ReplicaCopy {
  node: string;
  role: "primary" | "replica";
  state: "live" | "tombstone" | "absent" | "unreachable";
  present: boolean;
  version: number | null;
  origin: string | null;
  expires_at: string | null;
  last_updated: string | null;
  bytes: number | null;
  error: string | null;
}

interface ReplicasBody {
  key: string;
  node: string;
  owners: string[];
  timeout_ms: number;
  divergent: boolean;
  replicas: ReplicaCopy[];
}

interface HintTarget {
  node: string;
  count: number;
  bytes: number;
  oldest_age_ms: number;
  replay_failing: boolean;
}

interface HintQueueView {
  targets: HintTarget[];
  total_count: number;
  total_bytes: number;
  oldest_age_ms: number;
}

interface HintsBody extends HintQueueView {
  node: string;
  caps: { max_per_node: number; max_bytes: number; ttl_ms: number };
  counters: Record<string, number>;
  migrations: HintQueueView;
}

/** The counters the dashboard's Metrics view turns into rates (documented with /cluster/events). */
const METRICS_VIEW_COUNTERS = [
  "dist.write.attempts",
  "dist.write.quorum_failures",
  "dist.write.forward_promotion",
  "dist.hinted.queued",
  "dist.read_repair",
  "dist.merkle.keys_pulled",
  "item_evicted_count",
];

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("dashboard data routes on a real 3-node cluster with a policy file", function () {
  this.timeout(60_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-dash-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    layout = await clusterPorts(3, "d");
    const env = { ...FAST_TIMERS, SERVICE_AUTH_CONFIG: join(dir, "policy.yaml"), SERVICE_AUTH_TOKEN: PEER_TOKEN, SERVICE_AUTH_FAIL_LIMIT: "0", SERVICE_REPLICATION: "2", SERVICE_DEAD_AFTER: "60s" };
    nodes = await Promise.all(layout.map((p) => startMember(layout, p.id, env)));
    await waitAllAliveWithToken();
  });

  after(async () => {
    for (const n of nodes ?? []) n.child.kill("SIGCONT");
    await Promise.all((nodes ?? []).map((n) => n.stop("SIGKILL")));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe("GET /cluster/ring", () => {
    it("lists every node with primary shares adding up to 1 and owner shares to the replication factor", async () => {
      for (const n of nodes) {
        const body = ok<RingBody>(await mgmt(n, "/cluster/ring"), n.id);
        expect(body).to.have.all.keys("node", "membership_version", "replication", "virtual_nodes", "nodes");
        expect(body).to.include({ node: n.id, replication: 2, virtual_nodes: 128 });
        expect(body.nodes.map((x) => x.id)).to.deep.equal(["d1", "d2", "d3"]);
        expect(sum(body.nodes.map((x) => x.primary_share))).to.be.closeTo(1, 1e-9);
        expect(sum(body.nodes.map((x) => x.owner_share))).to.be.closeTo(2, 1e-9);
        for (const x of body.nodes) {
          expect(x.primary_share, x.id).to.be.within(0.15, 0.55);
          expect(x.owner_share, x.id).to.be.greaterThan(x.primary_share);
        }
      }
    });

    it("is the same ring on every node, with the membership version of /cluster/members", async () => {
      const bodies = await Promise.all(nodes.map(async (n) => ok<RingBody>(await mgmt(n, "/cluster/ring"))));
      for (const b of bodies.slice(1)) expect(b.nodes).to.deep.equal(bodies[0]?.nodes);
      const members = ok<{ membership_version: number }>(await mgmt(node("d1"), "/cluster/members"));
      const ring = ok<RingBody>(await mgmt(node("d1"), "/cluster/ring"));
      expect(ring.membership_version).to.equal(members.membership_version);
    });

    it("matches where keys land: each node's share of 3000 keys' primaries is near its primary_share", async () => {
      const ring = ok<RingBody>(await mgmt(node("d1"), "/cluster/ring"));
      const local = HashRing.build(["d1", "d2", "d3"], 2);
      const counts = new Map<string, number>();
      for (let i = 0; i < 3000; i++) {
        const p = local.ownersOf(`k:${i}`).primary;
        counts.set(p, (counts.get(p) ?? 0) + 1);
      }
      for (const x of ring.nodes) expect(x.primary_share, x.id).to.be.closeTo((counts.get(x.id) ?? 0) / 3000, 0.04);
    });
  });

  describe("GET /dist/hints", () => {
    it("answers an empty queue with the configured caps and the hint counters", async () => {
      const body = ok<HintsBody>(await mgmt(node("d1"), "/dist/hints"));
      expect(body).to.have.all.keys("node", "targets", "total_count", "total_bytes", "oldest_age_ms", "caps", "counters", "migrations");
      expect(body).to.deep.include({ node: "d1", targets: [], total_count: 0, total_bytes: 0, oldest_age_ms: 0 });
      expect(body.caps).to.deep.equal({ max_per_node: 10_000, max_bytes: 64 * 1024 * 1024, ttl_ms: 30_000 });
      expect(body.counters).to.have.all.keys("queued", "replayed", "expired", "dropped_per_node_cap", "dropped_bytes_cap");
      expect(body.migrations).to.deep.equal({ targets: [], total_count: 0, total_bytes: 0, oldest_age_ms: 0 });
    });
  });

  describe("GET /cluster/keys: the client listener's key browser", () => {
    const KEYS = [...Array.from({ length: 300 }, (_, i) => `kb:${String(i).padStart(3, "0")}`), "kb-other", "kbx", "user:1", "user:22", "a*b"];
    const viaClient = (n: NodeProcess, query: string) => call(`${n.api}/v1/cache/keys?${query}`, { headers: bearer(TOKENS.reader) });
    const viaMgmt = (n: NodeProcess, query: string) => mgmt(n, `/cluster/keys?${query}`);

    before(async () => {
      const res = await call(`${node("d2").api}/v1/cache/batch/put`, {
        method: "POST",
        headers: { ...bearer(TOKENS.writer), "content-type": "application/json" },
        body: JSON.stringify({ items: KEYS.map((key) => ({ key, value: key })) }),
      });
      expect(res.status, res.body.toString()).to.equal(200);
    });

    it("answers every query exactly as GET /v1/cache/keys does on the same node", async function () {
      this.timeout(180_000);
      // Each listing pages through every peer shard by shard: a handful of queries per node keeps
      // this test reasonable on a loaded machine.
      const queries = ["", "q=kb%3A1", "q=kb%3A*5", "q=kb%3A%3F%3F0&limit=7", "q=user&limit=1", "q=a%5C*b", "limit=600", "max=60000&limit=3", "q=kb&max=50&limit=20", "q=nothing"];
      const plan: Array<[NodeProcess, string]> = [...queries.map((q): [NodeProcess, string] => [node("d1"), q]), [node("d2"), "q=kb"], [node("d3"), "q=user%3A*"]];
      for (const [n, query] of plan) {
        // A peer that misses the listing timeout on this shared machine makes one answer partial:
        // compare answers where every node answered both (a few tries).
        let pair: [KeyPage, KeyPage] = [{} as KeyPage, {} as KeyPage];
        for (let attempt = 0; attempt < 3; attempt++) {
          const [c, m] = await Promise.all([viaClient(n, query), viaMgmt(n, query)]);
          pair = [ok<KeyPage>(c, `${n.id} client ?${query}`), ok<KeyPage>(m, `${n.id} mgmt ?${query}`)];
          if (pair[0].partial_nodes.length === 0 && pair[1].partial_nodes.length === 0) break;
        }
        expect(pair[1], `${n.id} ?${query}`).to.deep.equal(pair[0]);
        expect(pair[1].partial_nodes, `${n.id} ?${query}`).to.deep.equal([]);
      }
      const all = ok<KeyPage>(await viaMgmt(node("d1"), "q=kb%3A&limit=500"));
      expect(all.keys).to.deep.equal(KEYS.filter((k) => k.startsWith("kb:")).sort());
      expect(all).to.include({ total_matched: 300, truncated: false, next_cursor: "" });
      expect(all.partial_nodes).to.deep.equal([]);
      expect(ok<KeyPage>(await viaMgmt(node("d1"), "q=kb%3A*5&limit=500")).keys).to.deep.equal(KEYS.filter((k) => /^kb:.*5$/.test(k)).sort());
    });

    it("pages stably with cursors, and a cursor from either listener pages on the other", async () => {
      const seen: string[] = [];
      let cursor = "";
      for (let i = 0; ; i++) {
        const query = `q=kb%3A&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = ok<KeyPage>(await (i % 2 === 0 ? viaMgmt(node("d3"), query) : viaClient(node("d3"), query)));
        seen.push(...page.keys);
        cursor = page.next_cursor;
        if (cursor === "") break;
      }
      expect(seen).to.deep.equal(KEYS.filter((k) => k.startsWith("kb:")).sort());
    });

    it("answers the same 400 envelopes as the client listener", async () => {
      const first = ok<KeyPage>(await viaMgmt(node("d1"), "q=kb&limit=5"));
      const bad = ["limit=0", "limit=-3", "limit=abc", "max=0", "max=1.5", "q=%5Babc", "cursor=not-a-cursor", `q=user&cursor=${encodeURIComponent(first.next_cursor)}`, `q=kb&max=9&cursor=${encodeURIComponent(first.next_cursor)}`];
      for (const query of bad) {
        const [c, m] = await Promise.all([viaClient(node("d1"), query), viaMgmt(node("d1"), query)]);
        const body = expectEnvelope(m, 400, "BAD_REQUEST");
        expect(body, query).to.deep.equal(expectEnvelope(c, 400, "BAD_REQUEST"));
      }
    });
  });

  describe("GET /cluster/keys/{key}/replicas", () => {
    const ring = HashRing.build(["d1", "d2", "d3"], 2);
    const replicas = (n: NodeProcess, key: string) => mgmt(n, `/cluster/keys/${encodeURIComponent(key)}/replicas`);
    const writeKey = async (key: string, value: string, query = "") => {
      const r = await call(`${node("d1").api}/v1/cache/${encodeURIComponent(key)}${query}`, { method: "PUT", headers: bearer(TOKENS.writer), body: value });
      expect(r.status, r.body.toString()).to.equal(200);
    };

    it("shows the same live copy on every owner, asked from any node (owners and non-owners)", async () => {
      const key = "rep/live ü";
      const before = Date.now();
      await writeKey(key, "nineteen-byte value", "?ttl=10m");
      const owners = ring.ownersOf(key).ids;
      for (const n of nodes) {
        const body = ok<ReplicasBody>(await replicas(n, key), n.id);
        expect(body).to.have.all.keys("key", "node", "owners", "timeout_ms", "divergent", "replicas");
        expect(body).to.deep.include({ key, node: n.id, owners: [...owners], timeout_ms: 1500, divergent: false });
        expect(body.replicas.map((r) => [r.node, r.role])).to.deep.equal(owners.map((o, i) => [o, i === 0 ? "primary" : "replica"]));
        for (const r of body.replicas) {
          expect(r).to.deep.include({ state: "live", present: true, origin: owners[0], bytes: 19, error: null });
          expect(r.version).to.equal(body.replicas[0]?.version).and.be.a("number").above(Date.parse("2026-01-01") * 1000);
          const expires = Date.parse(r.expires_at as string);
          expect(expires).to.be.within(before + 10 * 60_000 - 1000, Date.now() + 10 * 60_000 + 1000);
          expect(Date.parse(r.last_updated as string)).to.be.within(before - 1000, Date.now() + 1000);
        }
      }
    });

    it("shows absent keys as absent and deleted keys as tombstones on every owner", async () => {
      const absent = ok<ReplicasBody>(await replicas(node("d2"), "rep:never-written"));
      expect(absent.divergent).to.equal(false);
      for (const r of absent.replicas) expect(r).to.deep.include({ state: "absent", present: false, version: null, origin: null, expires_at: null, last_updated: null, bytes: null, error: null });
      await writeKey("rep:deleted", "v");
      const del = await call(`${node("d2").api}/v1/cache/rep%3Adeleted`, { method: "DELETE", headers: bearer(TOKENS.writer) });
      expect(del.status).to.equal(200);
      const body = await eventually(async () => ok<ReplicasBody>(await replicas(node("d3"), "rep:deleted")), (b) => b.replicas.every((r) => r.state === "tombstone"), 5000, 100);
      for (const r of body.replicas) expect(r).to.deep.include({ state: "tombstone", present: false, bytes: null, expires_at: null, error: null });
      expect(body.replicas[0]?.version).to.be.a("number");
      expect(body.divergent).to.equal(false);
    });

    it("answers 400 envelopes for a key that is too long or not valid percent-encoding", async () => {
      expectEnvelope(await mgmt(node("d1"), `/cluster/keys/${"k".repeat(4097)}/replicas`), 400, "BAD_REQUEST");
      expectEnvelope(await mgmt(node("d1"), "/cluster/keys/%E0%A4%A/replicas"), 400, "BAD_REQUEST");
      expectEnvelope(await mgmt(node("d1"), "/cluster/keys/%FF/replicas"), 400, "BAD_REQUEST");
    });

    it("the peer Inspect call behind it needs the peer token on the dist listener", async () => {
      const url = `http://127.0.0.1:${layout[0]?.dist}/internal/hypercache.peer.v1.PeerService/Inspect`;
      const body = JSON.stringify({ keys: ["rep:never-written"] });
      const headers = { "content-type": "application/json" };
      expect((await call(url, { method: "POST", headers, body })).status).to.equal(401);
      expect((await call(url, { method: "POST", headers: { ...headers, ...bearer("wrong") }, body })).status).to.equal(401);
      const r = await call(url, { method: "POST", headers: { ...headers, ...bearer(PEER_TOKEN) }, body });
      expect(r.status, r.body.toString()).to.equal(200);
      const answer = r.json<{ node: string; records: Array<Record<string, unknown>> }>();
      expect(answer.node).to.equal("d1");
      expect(answer.records).to.have.length(1);
      expect(answer.records[0]).to.include({ key: "rep:never-written", state: "RECORD_STATE_ABSENT" });
    });
  });

  describe("everything else the dashboard reads is on the management origin", () => {
    it("GET /me tells any authenticated caller its identity and scopes (which controls to show); /v1/me keeps needing read", async () => {
      const n = node("d1");
      expect(ok(await mgmt(n, "/me", TOKENS.reader))).to.deep.equal({ id: "reader", scopes: ["read"], capabilities: ["cache.read"] });
      expect(ok(await mgmt(n, "/me", TOKENS.admin))).to.deep.equal({ id: "admin", scopes: ["admin"], capabilities: ["cache.admin"] });
      expect(ok(await mgmt(n, "/me", TOKENS.writer))).to.deep.equal({ id: "writer", scopes: ["write"], capabilities: ["cache.write"] });
      expect(ok(await mgmt(n, "/me", TOKENS.nobody))).to.deep.equal({ id: "nobody", scopes: [], capabilities: [] });
      expect(ok(await mgmt(n, "/v1/me", TOKENS.reader))).to.deep.equal(ok(await mgmt(n, "/me", TOKENS.reader)));
      expectForbidden(await mgmt(n, "/v1/me", TOKENS.admin), "admin /v1/me");
      expectUnauthorized(await mgmt(n, "/me", "tok-wrong"));
      expectUnauthorized(await call(`${n.mgmt}/me`));
      expect((await call(`${n.api}/me`, { headers: bearer(TOKENS.reader) })).status, "not on the client listener").to.equal(404);
    });

    it("/cluster/members lists incarnation, last_seen and each member's advertised mgmt_url", async () => {
      const body = ok<MembersBody & { members: Array<{ mgmt_url: string }> }>(await mgmt(node("d2"), "/cluster/members"));
      for (const m of body.members) {
        expect(m.incarnation, m.id).to.be.a("number");
        expect(Number.isNaN(Date.parse(m.last_seen)), m.id).to.equal(false);
        expect(m.mgmt_url, m.id).to.equal(node(m.id).mgmt);
      }
    });

    it("/cluster/events streams members and heartbeat frames to a bearer token, the heartbeat with every counter of the Metrics view", async () => {
      const controller = new AbortController();
      const res = await fetch(`${node("d1").mgmt}/cluster/events`, { headers: bearer(TOKENS.reader), signal: controller.signal });
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^text\/event-stream/);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      const events = new Map<string, string>();
      const until = Date.now() + 5000;
      while ((!events.has("members") || !events.has("heartbeat")) && Date.now() < until) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        for (const block of text.split("\n\n").slice(0, -1)) {
          const frame = parseSseBlock(block);
          if (frame.data.length > 0) events.set(frame.event, frame.data.join("\n"));
        }
      }
      controller.abort();
      expect([...events.keys()]).to.include.members(["members", "heartbeat"]);
      const heartbeat = JSON.parse(events.get("heartbeat") as string) as Record<string, number>;
      for (const name of METRICS_VIEW_COUNTERS) expect(heartbeat[name], name).to.be.a("number");
      expect(JSON.parse(events.get("members") as string)).to.include.keys("members", "membership_version");
      expectForbidden(await mgmt(node("d1"), "/cluster/events", TOKENS.writer), "writer /cluster/events");
    });

    it("the admin controls answer admin and refuse read (evict, trigger expiration; drain needs read or better)", async () => {
      for (const path of ["/evict", "/trigger-expiration"]) {
        expectForbidden(await call(`${node("d1").mgmt}${path}`, { method: "POST", headers: bearer(TOKENS.reader) }), `reader ${path}`);
        expect((await call(`${node("d1").mgmt}${path}`, { method: "POST", headers: bearer(TOKENS.admin) })).status, path).to.equal(200);
      }
      expectForbidden(await call(`${node("d1").mgmt}/dist/drain`, { method: "POST", headers: bearer(TOKENS.writer) }), "writer POST /dist/drain");
      ok(await mgmt(node("d1"), "/dist/drain"), "GET /dist/drain");
    });
  });

  describe("scopes", () => {
    const routes = ["/cluster/ring", "/dist/hints", "/cluster/keys", "/cluster/keys/k/replicas"];
    it("answers 401 with the envelope and a challenge without a credential or with a wrong one", async () => {
      for (const path of routes) {
        expectUnauthorized(await call(`${node("d1").mgmt}${path}`), path);
        expectUnauthorized(await mgmt(node("d1"), path, "tok-wrong"), path);
      }
    });

    it("answers 403 to identities without read or admin, 200 to read and to admin", async () => {
      for (const path of routes) {
        expectForbidden(await mgmt(node("d1"), path, TOKENS.writer), `writer ${path}`);
        expectForbidden(await mgmt(node("d1"), path, TOKENS.nobody), `nobody ${path}`);
        ok(await mgmt(node("d1"), path, TOKENS.reader), `reader ${path}`);
        ok(await mgmt(node("d1"), path, TOKENS.admin), `admin ${path}`);
      }
    });
  });
  // Last: d3 is stopped (SIGSTOP) and resumed (SIGCONT) here.
  describe("with an owner stopped (SIGSTOP)", () => {
    const ring = HashRing.build(["d1", "d2", "d3"], 2);
    /** Keys whose owners are d1 (primary) and d3. */
    const d1d3 = Array.from({ length: 400 }, (_, i) => `stop:${i}`).filter((k) => ring.ownersOf(k).header === "d1,d3").slice(0, 20);

    before(async () => {
      expect(d1d3.length).to.equal(20);
      node("d3").child.kill("SIGSTOP");
    });
    after(() => {
      node("d3").child.kill("SIGCONT");
    });

    // Runs first: the key browser asks alive peers only, and d3 turns suspect a few heartbeats after the stop.
    it("GET /cluster/keys names the stopped node in partial_nodes, as the client listener does", async () => {
      const [c, m] = await Promise.all([
        call(`${node("d1").api}/v1/cache/keys?q=kb%3A&limit=5`, { headers: bearer(TOKENS.reader) }),
        mgmt(node("d1"), "/cluster/keys?q=kb%3A&limit=5"),
      ]);
      const fromMgmt = ok<KeyPage>(m);
      expect(fromMgmt.partial_nodes).to.deep.equal(["d3"]);
      expect(ok<KeyPage>(c).partial_nodes).to.deep.equal(["d3"]);
      // Every key has an owner besides d3 (replication 2), so nothing is missing from the listing.
      expect(fromMgmt.total_matched).to.equal(300);
    });

    it("GET /cluster/keys/{key}/replicas shows the stopped owner as unreachable within the per-owner timeout", async () => {
      const key = d1d3[0] as string;
      for (const n of [node("d1"), node("d2")]) {
        const started = Date.now();
        const body = ok<ReplicasBody>(await mgmt(n, `/cluster/keys/${encodeURIComponent(key)}/replicas`), n.id);
        const elapsed = Date.now() - started;
        expect(elapsed, `${n.id} answered after ${elapsed} ms`).to.be.below(1500 + 1500);
        expect(body.owners).to.deep.equal(["d1", "d3"]);
        const d3 = body.replicas.find((r) => r.node === "d3");
        expect(d3).to.deep.include({ state: "unreachable", present: false, version: null, bytes: null });
        expect(d3?.error).to.be.a("string").and.not.equal("");
        expect(body.replicas.find((r) => r.node === "d1")?.state).to.be.oneOf(["live", "absent"]);
        expect(body.divergent).to.equal(false);
      }
    });

    it("GET /dist/hints shows the hints d1 queues for d3: count, bytes, a growing oldest age, replay failing", async () => {
      for (const key of d1d3) {
        const r = await call(`${node("d1").api}/v1/cache/${encodeURIComponent(key)}?consistency=one`, { method: "PUT", headers: bearer(TOKENS.writer), body: "hinted-value" });
        expect(r.status, r.body.toString()).to.equal(200);
      }
      const body = await eventually(
        async () => ok<HintsBody>(await mgmt(node("d1"), "/dist/hints")),
        (b) => b.targets.some((t) => t.node === "d3" && t.count === d1d3.length),
        20_000,
        200,
      );
      const d3 = body.targets.find((t) => t.node === "d3");
      expect(d3, JSON.stringify(body)).to.not.equal(undefined);
      const perHint = "hinted-value".length + HINT_OVERHEAD_BYTES;
      expect(d3).to.include({ count: d1d3.length, bytes: d1d3.reduce((n, k) => n + 2 * k.length + perHint, 0) });
      expect(body.total_count).to.equal(sum(body.targets.map((t) => t.count)));
      expect(body.total_bytes).to.equal(sum(body.targets.map((t) => t.bytes)));
      expect(body.counters.queued).to.be.at.least(d1d3.length);
      const later = await eventually(
        async () => ok<HintsBody>(await mgmt(node("d1"), "/dist/hints")),
        (b) => (b.targets.find((t) => t.node === "d3")?.oldest_age_ms ?? 0) > (d3?.oldest_age_ms ?? 0) + 300 && b.targets.find((t) => t.node === "d3")?.replay_failing === true,
        15_000,
        200,
      );
      expect(later.targets.find((t) => t.node === "d3"), JSON.stringify(later)).to.include({ replay_failing: true });
    });

    it("after SIGCONT the hints are replayed and d3 leaves the list", async () => {
      node("d3").child.kill("SIGCONT");
      const body = await eventually(async () => ok<HintsBody>(await mgmt(node("d1"), "/dist/hints")), (b) => b.targets.every((t) => t.node !== "d3"), 20_000, 200);
      expect(body.targets.map((t) => t.node)).to.not.include("d3");
      expect(body.counters.replayed).to.be.at.least(d1d3.length);
    });
  });
  describe("divergence (last: clears one node)", () => {
    it("flags divergent when one owner lost its copy (POST /clear on it, admin) and shows which", async () => {
      const ring = HashRing.build(["d1", "d2", "d3"], 2);
      const key = Array.from({ length: 200 }, (_, i) => `div:${i}`).find((k) => ring.ownersOf(k).header === "d1,d2") as string;
      const put = await call(`${node("d1").api}/v1/cache/${encodeURIComponent(key)}`, { method: "PUT", headers: bearer(TOKENS.writer), body: "v" });
      expect(put.status).to.equal(200);
      await eventually(async () => ok<ReplicasBody>(await mgmt(node("d3"), `/cluster/keys/${encodeURIComponent(key)}/replicas`)), (b) => b.replicas.every((r) => r.state === "live"), 5000, 100);
      expectForbidden(await call(`${node("d2").mgmt}/clear`, { method: "POST", headers: bearer(TOKENS.reader) }), "reader POST /clear");
      const cleared = await call(`${node("d2").mgmt}/clear`, { method: "POST", headers: bearer(TOKENS.admin) });
      expect(cleared.status).to.equal(200);
      const body = ok<ReplicasBody>(await mgmt(node("d3"), `/cluster/keys/${encodeURIComponent(key)}/replicas`));
      expect(body.divergent).to.equal(true);
      expect(body.replicas.map((r) => [r.node, r.state])).to.deep.equal([["d1", "live"], ["d2", "absent"]]);
    });
  });
});
