// What the CLI's incr, touch and --if-match send, against a recording HTTP server (from a review
// of 858eb30): negative and malformed deltas, weak tags, ETag lists, and line breaks.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { cli } from "./cli-harness.js";

interface Seen { url: string; headers: http.IncomingHttpHeaders; body: string }

describe("hypercache CLI arguments of conditional writes and counters", function () {
  this.timeout(20_000);
  let s: http.Server;
  let env: Record<string, string>;
  const seen: Seen[] = [];
  before(async () => {
    s = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ url: req.url ?? "", headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json", etag: '"e-n1"' });
        res.end(JSON.stringify(req.url?.includes("/incr") ? { value: 1, version: 1, owners: ["n1"], applied_by: "n1" } : { key: "k", stored: true, bytes: 1, node: "n1", owners: ["n1"] }));
      });
    });
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    env = { HYPERCACHE_ENDPOINTS: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  });
  after(() => new Promise<void>((r) => s.close(() => r())));
  beforeEach(() => (seen.length = 0));

  it("a negative delta needs no --: `incr hits -5` sends delta -5 (commander 14 takes it as an argument)", async () => {
    const r = await cli(["incr", "hits", "-5"], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(seen[0]?.body ?? "{}")).to.include({ delta: -5 });
  });

  it("a delta written in hex or with an exponent is a usage error, not 16 or 1000", async () => {
    for (const d of ["0x10", "1e3", "0b11"]) {
      const r = await cli(["incr", "hits", d], { env });
      expect(r.code, `${d}: sent ${seen.at(-1)?.body}`).to.equal(2);
    }
  });

  it("--if-match with a weak tag is refused as usage (the server's ETags are strong and never match W/)", async () => {
    for (const tag of [`W/"e-n1"`, "a,,b"]) {
      const r = await cli(["set", "k", "v", "--if-match", tag], { env });
      expect(r.code, `${tag}: sent If-Match ${seen.at(-1)?.headers["if-match"]}`).to.equal(2);
    }
    expect(seen).to.have.length(0);
  });

  it("--if-match takes a comma-separated list, each tag quoted or not", async () => {
    const r = await cli(["del", "k", "--if-match", 'a, "b"'], { env });
    expect(r.code, r.stderr).to.equal(1); // the stub's answer is not a delete answer
    expect(seen[0]?.headers["if-match"]).to.equal('"a", "b"');
  });

  it("--if-match holding a line break is a usage error (exit 2), not a transport failure", async () => {
    const r = await cli(["set", "k", "v", "--if-match", '"a"\r\nX-Injected: 1'], { env });
    expect(r.code, r.stderr).to.equal(2);
  });
});
