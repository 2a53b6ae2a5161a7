// Usage errors and exit codes at the edges: a password in an endpoint URL is never printed, a token
// that cannot be a header is a usage error, `load` of a directory says so, and a 429 is not an
// authentication failure.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { EXIT } from "../src/exit-codes.js";
import { cli } from "./cli-harness.js";

describe("cli edges", () => {
  it("an endpoint with a password is a usage error that does not print the password", async () => {
    for (const e of ["ftp://u:hunter2@h", "http://u:hunter2@127.0.0.1:1"]) {
      const r = await cli(["-e", e, "get", "k"]);
      expect(r.code, e).to.equal(EXIT.USAGE);
      expect(r.stderr + r.stdout, e).to.not.contain("hunter2");
    }
  });

  it("a token with CR or LF is a usage error, before any request", async () => {
    const r = await cli(["-e", "http://127.0.0.1:1", "--token", "abc\r\nX-Evil: 1", "get", "k"]);
    expect(r.code).to.equal(EXIT.USAGE);
    expect(r.stderr).to.match(/token/);
  });

  it("load of a directory is a usage error naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hc-load-"));
    try {
      const r = await cli(["-e", "http://127.0.0.1:1", "load", dir]);
      expect(r.code).to.equal(EXIT.USAGE);
      expect(r.stderr).to.contain(dir).and.match(/directory/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("load --ttl with a bad duration is a usage error before the file is read or anything is sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hc-load-"));
    try {
      const file = join(dir, "items.jsonl");
      writeFileSync(file, '{"key":"a","value":"x"}\n');
      let requests = 0;
      const server = http.createServer((req, res) => (requests++, req.resume(), res.writeHead(500).end()));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const r = await cli(["-e", `http://127.0.0.1:${(server.address() as AddressInfo).port}`, "--json", "load", file, "--ttl", "bogus"]);
        expect(r.code).to.equal(EXIT.USAGE);
        expect(r.stderr).to.match(/--ttl/);
        expect(r.stdout, "no summary: nothing was read").to.equal("");
        expect(requests).to.equal(0);
      } finally {
        await new Promise<void>((r) => server.close(() => r()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--oidc-issuer http://... is refused (exit 2) like --user over http: the client secret never travels in clear without --insecure-oidc", async () => {
    const seen: string[] = [];
    const issuer = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
        seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ""} ${body}`);
        if (req.url === "/.well-known/openid-configuration") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ issuer: base, token_endpoint: `${base}/token` }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ access_token: "t", token_type: "Bearer", expires_in: 60 }));
      });
    });
    await new Promise<void>((r) => issuer.listen(0, "127.0.0.1", r));
    const sentSecret = () => seen.some((s) => s.includes("s3cret-value") || s.includes(Buffer.from("ops:s3cret-value").toString("base64")));
    try {
      const base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
      const argv = ["-e", "http://127.0.0.1:1", "--timeout", "1s", "--oidc-issuer", base, "--client-id", "ops", "me"];
      const env = { HYPERCACHE_CLIENT_SECRET: "s3cret-value" };
      // Before: the secret went to the http token endpoint (exit 5, from the dead node).
      const r = await cli(argv, { env });
      expect(sentSecret(), `the client secret went over plain http (exit ${r.code}): ${seen.join(" | ")}`).to.equal(false);
      expect(r.code).to.equal(EXIT.USAGE);
      expect(r.stderr).to.contain("plain http").and.contain("--insecure-oidc");
      expect((await cli(["-e", "http://127.0.0.1:1", "--client-id", "ops", "me"], { env: { ...env, HYPERCACHE_OIDC_ISSUER: base } })).code, "the issuer from the environment too").to.equal(EXIT.USAGE);
      expect(seen).to.deep.equal([]);
      const optedIn = await cli([...argv, "--insecure-oidc"], { env });
      expect(sentSecret(), "with --insecure-oidc the token is fetched").to.equal(true);
      expect(optedIn.code, optedIn.stderr).to.equal(EXIT.ALL_ENDPOINTS_FAILED);
    } finally {
      await new Promise<void>((r) => issuer.close(() => r()));
    }
  });

  it("a 404 that is not hypercache's key miss (a proxy's page, an unknown route) exits 1, not 3 ('not found')", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      if (req.url?.startsWith("/api/")) return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "no such route", code: "NOT_FOUND", details: { route: "unknown" } }));
      res.writeHead(404, { "content-type": "text/html" }).end("<html><body>404 Not Found (nginx)</body></html>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const argv of [["get", "k"], ["get", "k", "--out", "-"], ["members"], ["owners", "k"]]) {
        const r = await cli(["-e", url, "--mgmt-endpoints", url, ...argv]);
        expect(r.code, argv.join(" ")).to.equal(EXIT.SERVER_ERROR);
        expect(r.stderr, argv.join(" ")).to.contain("404");
      }
      const wrongPrefix = await cli(["-e", `${url}/api`, "get", "k"]);
      expect(wrongPrefix.code, "an unknown route's NOT_FOUND").to.equal(EXIT.SERVER_ERROR);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("members against a dead node exits 5 (all endpoints failed) naming the endpoint, not 2 with 'no management endpoint known'", async () => {
    const r = await cli(["-e", "http://127.0.0.1:1", "members"]);
    expect(r.code).to.equal(EXIT.ALL_ENDPOINTS_FAILED);
    expect(r.stderr).to.contain("all endpoints failed: http://127.0.0.1:1");
  });

  it("del whose first attempt's answer was lost (the node may have deleted the key) and whose replay finds nothing exits 0, not 3", async () => {
    const lost = http.createServer((req) => req.on("data", () => undefined).on("end", () => req.socket.destroy()));
    const second = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ key: "k", deleted: false, node: "n2" }));
    });
    await Promise.all([lost, second].map((s) => new Promise<void>((r) => s.listen(0, "127.0.0.1", r))));
    const url = (s: http.Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    try {
      const r = await cli(["-e", `${url(lost)},${url(second)}`, "--json", "del", "k"]);
      expect(r.code, r.stderr).to.equal(EXIT.OK);
      expect(r.json()).to.include({ deleted: false, replayed: true });
      expect(r.stderr).to.match(/is gone; an earlier attempt may have deleted it/);
      const plain = await cli(["-e", url(second), "--json", "del", "k"]);
      expect(plain.code, "a first answer of deleted: false is still 'did not exist'").to.equal(EXIT.NOT_FOUND);
    } finally {
      for (const s of [lost, second]) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
    }
  });

  it("a 429 (too many requests) exits 1, not the authentication code", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
      res.end(JSON.stringify({ error: "rate limit", code: "TOO_MANY_REQUESTS" }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const r = await cli(["-e", `http://127.0.0.1:${(server.address() as AddressInfo).port}`, "get", "k"]);
      expect(r.stderr).to.match(/429 TOO_MANY_REQUESTS/);
      expect(r.code).to.equal(EXIT.SERVER_ERROR);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("an answer over the client's bound says so in the all-endpoints-failed line", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(512 * 1024 * 1024) });
      res.write("x");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const r = await cli(["-e", `http://127.0.0.1:${(server.address() as AddressInfo).port}`, "get", "k", "--out", "-"]);
      expect(r.code).to.equal(EXIT.ALL_ENDPOINTS_FAILED);
      expect(r.stderr).to.match(/over \d+ bytes/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
