// Peer sessions across a change of SERVICE_DIST_TLS_CA. A TLS session is verified once, at its
// handshake, so before the renewal a node whose reloaded CA no longer trusted a peer went on
// talking to it over the sessions both had opened under the old CA, for as long as traffic kept
// them open. Now a CA change ends those sessions: the outbound ones move to a new session (its
// Exchange stream first), the inbound ones get GOAWAY. A rotation done in steps (both CAs, then
// the new certificates, then the new CA alone) loses no write; a node that trusts only the new CA
// stops talking to a peer that still has an old certificate.
import { expect } from "chai";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTestCerts, type TestCerts } from "../helpers/certs.js";
import { replaceFile } from "../helpers/replace-file.js";
import { clusterPorts, startMember, type NodeProcess } from "../helpers/node-process.js";
import { FAST_TIMERS, describeMembers, eventually, members, put, stateOf, waitAllAlive } from "./cluster-helpers.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One node's peer TLS files, replaced the way a Secret update does (a new file renamed over the old one). */
class PeerFiles {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
  constructor(dir: string, id: string) {
    this.cert = join(dir, `${id}.crt`);
    this.key = join(dir, `${id}.key`);
    this.ca = join(dir, `${id}-ca.crt`);
  }
  setCert(certs: TestCerts): void {
    replaceFile(this.key, certs.pem(certs.server.key));
    replaceFile(this.cert, certs.pem(certs.server.cert));
  }
  setCa(...cas: TestCerts[]): void {
    replaceFile(this.ca, Buffer.concat(cas.map((c) => c.pem(c.ca.cert))));
  }
}

describe("peer sessions across a change of the peer CA (real processes, mutual TLS)", function () {
  this.timeout(90_000);
  let a: TestCerts;
  let b: TestCerts;
  let dir: string;
  let nodes: NodeProcess[] = [];

  before(() => {
    a = makeTestCerts([]);
    b = makeTestCerts([]);
    dir = mkdtempSync(join(tmpdir(), "peer-ca-"));
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
    nodes = [];
  });
  after(() => {
    a?.cleanup();
    b?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two nodes whose peer files start as CA A's certificate and CA A. */
  async function startPair(): Promise<PeerFiles[]> {
    const layout = await clusterPorts(2);
    const files = layout.map((p) => new PeerFiles(dir, `${p.id}-${p.dist}`));
    for (const f of files) {
      copyFileSync(a.server.cert, f.cert);
      copyFileSync(a.server.key, f.key);
      copyFileSync(a.ca.cert, f.ca);
    }
    nodes = await Promise.all(
      layout.map((p, i) =>
        startMember(layout, p.id, {
          ...FAST_TIMERS,
          SERVICE_DIST_TLS_CERT: files[i]!.cert,
          SERVICE_DIST_TLS_KEY: files[i]!.key,
          SERVICE_DIST_TLS_CA: files[i]!.ca,
          SERVICE_PEER_TOKEN: "peer-ca-rotation-token-0123456789",
          SERVICE_TLS_RELOAD_INTERVAL: "100ms",
        }),
      ),
    );
    await waitAllAlive(nodes, ["n1", "n2"]);
    return files;
  }

  it("a node whose reloaded CA no longer trusts a peer stops talking to it, both ways, though traffic kept the old sessions busy", async () => {
    const files = await startPair();
    const [n1] = nodes as [NodeProcess, NodeProcess];
    expect((await put(n1, "before", "v")).status).to.equal(200);

    // n1 moves to CA B alone; n2 keeps its certificate of CA A.
    files[0]!.setCert(b);
    files[0]!.setCa(b);
    await n1.waitForLog("tls certificate reloaded from its changed files", 5000, (r) => r.listener === "dist");
    // Before: the probes (every 200 ms) kept both sessions open, and both nodes stayed alive to each other.
    const views = await eventually(
      () => Promise.all(nodes.map(members)),
      (v) => stateOf(v[0]!, "n2") !== "alive" && stateOf(v[1]!, "n1") !== "alive",
      8000,
      100,
    ).catch(async () => Promise.all(nodes.map(members)));
    expect(stateOf(views[0]!, "n2"), `n1's view: ${describeMembers(views[0]!)}`).to.not.equal("alive");
    expect(stateOf(views[1]!, "n1"), `n2's view: ${describeMembers(views[1]!)}`).to.not.equal("alive");
  });

  it("a rotation in steps (both CAs, the new certificates, the new CA alone) fails no write", async () => {
    const files = await startPair();
    const [n1, n2] = nodes as [NodeProcess, NodeProcess];
    let stop = false;
    const failures: string[] = [];
    let written = 0;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const node = i % 2 === 0 ? n1 : n2;
        const r = await put(node, `rot-${i}`, `v${i}`, "?consistency=all");
        if (r.status === 200) written++;
        else failures.push(`${new Date().toISOString()} ${node.id} rot-${i}: ${r.status} ${r.text.slice(0, 200)}`);
      }
    })();
    const reloads = () => nodes.reduce((sum, n) => sum + n.logs.filter((r) => r.message === "tls certificate reloaded from its changed files" && r.listener === "dist").length, 0);
    const step = async (change: (f: PeerFiles) => void) => {
      const before = reloads();
      for (const f of files) change(f);
      await eventually(async () => reloads(), (n) => n >= before + 2, 5000, 50);
      await sleep(1500);
    };
    try {
      await sleep(500);
      await step((f) => f.setCa(a, b));
      await step((f) => f.setCert(b));
      await step((f) => f.setCa(b));
    } finally {
      stop = true;
      await writer;
    }
    expect(failures, `failed writes (of ${written + failures.length})`).to.deep.equal([]);
    expect(written).to.be.greaterThan(50);
    const views = await Promise.all(nodes.map(members));
    for (const v of views) expect(describeMembers(v)).to.not.match(/suspect|dead/);
  });
});
