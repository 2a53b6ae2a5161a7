// GET /cluster/keys/{key}/value on a real process: the first 4096 bytes of a value, base64, with
// its size, expiry and version; 404 for a missing key; 400 for a bad key; the read scope.
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const TOKEN = "preview-token";

describe("GET /cluster/keys/{key}/value (the dashboard's value preview)", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const put = async (key: string, body: Uint8Array | string, query = "") => {
    const r = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}${query}`, { method: "PUT", headers: auth, body });
    expect(r.status, await r.text()).to.equal(200);
  };
  const preview = (key: string, headers: Record<string, string> = auth) => fetch(`${node.mgmt}/cluster/keys/${encodeURIComponent(key)}/value`, { headers });

  before(async () => {
    node = await startNode({ id: "preview-1", env: { SERVICE_AUTH_TOKEN: TOKEN } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("answers a short value whole, with its size, expiry and version", async () => {
    await put("greeting/en", "hello, world", "?ttl=10m");
    const r = await preview("greeting/en");
    expect(r.status).to.equal(200);
    const body = (await r.json()) as { key: string; node: string; bytes: number; preview_base64: string; truncated: boolean; expires_at: string | null; version: number };
    expect(body).to.include({ key: "greeting/en", node: "preview-1", bytes: 12, truncated: false });
    expect(Buffer.from(body.preview_base64, "base64").toString()).to.equal("hello, world");
    const inMs = Date.parse(body.expires_at as string) - Date.now();
    expect(inMs).to.be.within(9 * 60_000, 10 * 60_000 + 1000);
    expect(body.version).to.be.a("number").greaterThan(0);
  });

  it("cuts a long value at 4096 bytes and says so; binary bytes survive", async () => {
    const big = Buffer.alloc(10_000, 0xfe);
    big[0] = 0;
    await put("big", big);
    const body = (await (await preview("big")).json()) as { bytes: number; preview_base64: string; truncated: boolean; expires_at: string | null };
    expect(body.bytes).to.equal(10_000);
    expect(body.truncated).to.equal(true);
    expect(body.expires_at).to.equal(null);
    expect(Buffer.from(body.preview_base64, "base64").equals(big.subarray(0, 4096))).to.equal(true);
  });

  it("a counter previews as the decimal text a GET answers, not its stored state", async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${node.api}/v1/cache/hits/incr`, { method: "POST", headers: auth })).status).to.equal(200);
    const body = (await (await preview("hits")).json()) as { bytes: number; preview_base64: string };
    expect([Buffer.from(body.preview_base64, "base64").toString(), body.bytes]).to.deep.equal(["3", 1]);
  });

  it("a missing key is a 404 envelope, an over-long key a 400, no credential a 401", async () => {
    const missing = await preview("no-such-key");
    expect(missing.status).to.equal(404);
    expect(await missing.json()).to.include({ code: "NOT_FOUND" });
    const long = await preview("k".repeat(5000));
    expect(long.status).to.equal(400);
    expect(await long.json()).to.include({ code: "BAD_REQUEST" });
    expect((await preview("greeting/en", {})).status).to.equal(401);
  });
});
