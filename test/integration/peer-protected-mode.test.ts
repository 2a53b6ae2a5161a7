// Protected mode of the peer port (SPEC-NOTES): with no peer credential configured (no peer
// token, no peer mTLS) the dist listener serves peer calls to loopback callers only and answers
// any other address 401 with an envelope saying why; SERVICE_PEER_INSECURE=true lifts it with a
// start-up warning; a peer token serves callers from anywhere. The node runs in one network
// namespace and the outside caller in another (198.18.0.0/24), so nothing touches the host.
import { expect } from "chai";
import { LOG } from "../../src/log/index.js";
import { fetchScript, namespacePair, netnsUnavailable, type NamespacePair } from "../helpers/netns.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const DIST = 7946;

describe("peer port protected mode, seen from another network namespace", function () {
  this.timeout(40_000);
  let net: NamespacePair;
  let node: NodeProcess | undefined;

  before(async function () {
    const why = await netnsUnavailable();
    if (why) this.skip();
    net = await namespacePair("pm", 201, 202);
  });
  afterEach(async () => {
    await node?.stop("SIGKILL");
    node = undefined;
  });
  after(async () => {
    await net?.remove();
  });

  /** Starts a node inside namespace a, every listener on all of its interfaces. */
  const start = (env: Record<string, string>) =>
    startNode({ id: "pm1", wrap: ["ip", "netns", "exec", net.a], env: { SERVICE_API_ADDR: ":8080", SERVICE_MGMT_ADDR: ":8081", SERVICE_DIST_ADDR: `:${DIST}`, ...env } });

  /** GET or POST a dist path from namespace `ns`, to `host`. */
  async function ask(ns: string, host: string, path: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<{ status: number; body: string }> {
    const out = await net.exec(ns, [process.execPath, "-e", fetchScript(`http://${host}:${DIST}${path}`, headers, method, body)]);
    return JSON.parse(out.trim()) as { status: number; body: string };
  }

  it("without a peer credential: a caller from 198.18.0.202 gets 401 with an envelope naming protected mode; a loopback caller is served", async () => {
    node = await start({});
    expect(node.logs.some((r) => r.message === LOG.peerProtectedMode)).to.equal(true);
    for (const [method, path, body] of [["GET", "/health", undefined], ["POST", "/internal/set", "{}"], ["POST", "/internal/gossip", "[]"], ["POST", "/dist/drain", undefined]] as const) {
      const r = await ask(net.b, net.addressA, path, { "content-type": "application/json" }, method, body);
      expect(r.status, `${method} ${path}: ${r.body}`).to.equal(401);
      const env = JSON.parse(r.body) as { error: string; code: string };
      expect(env.code).to.equal("UNAUTHORIZED");
      expect(env.error).to.match(/^protected mode/).and.include("198.18.0.202");
    }
    expect((await ask(net.a, "127.0.0.1", "/health")).status, "loopback caller").to.equal(200);
    const health = JSON.parse((await ask(net.a, "127.0.0.1", "/health")).body) as { draining: boolean };
    expect(health.draining, "the refused /dist/drain drained nothing").to.equal(false);
  });

  it("SERVICE_PEER_INSECURE=true serves the outside caller, and the node warns at start-up", async () => {
    node = await start({ SERVICE_PEER_INSECURE: "true" });
    expect(node.logs.find((r) => r.message === LOG.peerInsecure)?.level).to.equal("warn");
    expect((await ask(net.b, net.addressA, "/health")).status).to.equal(200);
  });

  it("with a peer token the outside caller is served when it carries the token, and refused without it", async () => {
    node = await start({ SERVICE_PEER_TOKEN: "netns-token" });
    expect(node.logs.some((r) => r.message === LOG.peerProtectedMode)).to.equal(false);
    expect((await ask(net.b, net.addressA, "/health", { authorization: "Bearer netns-token" })).status).to.equal(200);
    const r = await ask(net.b, net.addressA, "/health");
    expect(r.status).to.equal(401);
    expect((JSON.parse(r.body) as { error: string }).error).to.equal("missing or wrong peer token");
  });
});
