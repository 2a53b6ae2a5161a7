// The routes that read their key from the path (/cluster/keys/{key}/value and /replicas on the
// management listener, /v1/owners/{key} on the client listener) answer for the key the path
// names whatever form of the path the router accepts: with a trailing slash, in upper case, or
// as an absolute-form request target (GET http://host/cluster/keys/abc/value). Before, the key
// was cut out of the raw request target at fixed offsets: "abc/" for a trailing slash, and
// "er/keys/abc" for the absolute form.
import net from "node:net";
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** Sends one GET with `target` as the request target, on its own connection. */
function rawGet(port: number, target: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => s.end(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    let text = "";
    s.setEncoding("latin1");
    s.on("data", (d: string) => (text += d));
    s.on("error", reject);
    s.on("close", () => {
      const status = Number(text.split(" ")[1]);
      const raw = text.slice(text.indexOf("\r\n\r\n") + 4);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.from(raw, "latin1").toString("utf8")) as Record<string, unknown>;
      } catch {
        body = { unparsed: raw.slice(0, 200) };
      }
      resolve({ status, body });
    });
  });
}

describe("routes with a key in the path answer for the key the path names", function () {
  this.timeout(30_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "key-path-1" });
    for (const [key, value] of [
      ["abc", "value of abc"],
      ["abc/", "value of abc/"],
      ["er/keys/abc", "value of er/keys/abc"],
    ]) {
      const r = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key as string)}`, { method: "PUT", body: value });
      expect(r.status).to.equal(200);
    }
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  const preview = (a: Answer) => Buffer.from(String(a.body.preview_base64 ?? ""), "base64").toString();

  for (const target of ["/cluster/keys/abc/value", "/cluster/keys/abc/value/", "/CLUSTER/KEYS/abc/VALUE", "http://127.0.0.1/cluster/keys/abc/value", "http://x/cluster/keys/abc/value/"]) {
    it(`GET ${target}: the value of abc`, async () => {
      const a = await rawGet(node.mgmtPort, target);
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body.key).to.equal("abc");
      expect(preview(a)).to.equal("value of abc");
    });
  }

  it("GET /cluster/keys/abc%2F/value/: the value of abc/ (an encoded slash stays in the key)", async () => {
    const a = await rawGet(node.mgmtPort, "/cluster/keys/abc%2F/value/");
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(a.body.key).to.equal("abc/");
    expect(preview(a)).to.equal("value of abc/");
  });

  for (const target of ["/cluster/keys/abc/replicas", "/cluster/keys/abc/replicas/", "http://h/cluster/keys/abc/replicas", "http://h/cluster/keys/abc/replicas/"]) {
    it(`GET ${target}: the replicas of abc`, async () => {
      const a = await rawGet(node.mgmtPort, target);
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body.key).to.equal("abc");
    });
  }

  for (const target of ["/v1/owners/abc", "/v1/owners/abc/", "http://h/v1/owners/abc", "http://h/v1/owners/abc/"]) {
    it(`client listener GET ${target}: the owners of abc`, async () => {
      const a = await rawGet(node.apiPort, target);
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body.key).to.equal("abc");
    });
  }
});
