// The dashboard's files on the management listener of a real process with authentication on:
// served without a credential, from memory, with the CSP, immutable caching of hashed assets,
// gzip and ETags (one per representation, If-None-Match compared weakly over a list, as RFC 9110
// says for GET); / redirects; SERVICE_DASHBOARD=off answers 404 everywhere; every one of these
// answers, redirects and 404s included, carries the CSP, nosniff and Referrer-Policy.
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { call, type Reply } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const DIST = fileURLToPath(new URL("../../dist/dashboard/", import.meta.url));
const CSP = "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'";

describe("dashboard static files on the management listener", function () {
  this.timeout(30_000);
  let on: NodeProcess;
  let off: NodeProcess;
  const assets = readdirSync(`${DIST}assets`);
  const script = assets.find((n) => n.endsWith(".js")) as string;
  const sheet = assets.find((n) => n.endsWith(".css")) as string;

  before(async () => {
    [on, off] = await Promise.all([
      startNode({ id: "dash-on", env: { SERVICE_AUTH_TOKEN: "secret-token" } }),
      startNode({ id: "dash-off", env: { SERVICE_AUTH_TOKEN: "secret-token", SERVICE_DASHBOARD: "off" } }),
    ]);
  });
  after(async () => {
    await Promise.all([on?.stop("SIGKILL"), off?.stop("SIGKILL")]);
  });

  it("GET /dashboard/ answers the built page without a credential, with the CSP and no-cache", async () => {
    const r = await fetch(`${on.mgmt}/dashboard/`);
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.equal("text/html; charset=utf-8");
    expect(r.headers.get("content-security-policy")).to.equal(CSP);
    expect(r.headers.get("cache-control")).to.equal("no-cache");
    expect(r.headers.get("x-content-type-options")).to.equal("nosniff");
    const html = await r.text();
    expect(html).to.equal(readFileSync(`${DIST}index.html`, "utf8"));
    expect(html).to.include(`src="assets/${script}"`).and.include(`href="assets/${sheet}"`);
    expect(html, "no inline script").to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html, "no external host").to.not.match(/(src|href)="(https?:)?\/\//);
  });

  it("hashed assets are immutable, gzipped on request, and revalidate by ETag", async () => {
    for (const name of [script, sheet]) {
      const r = await fetch(`${on.mgmt}/dashboard/assets/${name}`, { headers: { "accept-encoding": "gzip" } });
      expect(r.status, name).to.equal(200);
      expect(r.headers.get("cache-control")).to.equal("public, max-age=31536000, immutable");
      expect(r.headers.get("content-encoding")).to.equal("gzip");
      expect(r.headers.get("content-security-policy")).to.equal(CSP);
      expect(Buffer.from(await r.arrayBuffer()).equals(readFileSync(`${DIST}assets/${name}`)), `${name} body`).to.equal(true);
      const again = await fetch(`${on.mgmt}/dashboard/assets/${name}`, { headers: { "if-none-match": r.headers.get("etag") as string } });
      expect(again.status).to.equal(304);
    }
    expect((await fetch(`${on.mgmt}/dashboard/assets/${script}`)).headers.get("content-type")).to.equal("text/javascript; charset=utf-8");
    expect((await fetch(`${on.mgmt}/dashboard/assets/${sheet}`)).headers.get("content-type")).to.equal("text/css; charset=utf-8");
  });

  it("/ and /dashboard redirect to /dashboard/; an unknown asset is a 404 envelope", async () => {
    for (const path of ["/", "/dashboard"]) {
      const r = await fetch(`${on.mgmt}${path}`, { redirect: "manual" });
      expect(r.status, path).to.equal(302);
      expect(r.headers.get("location"), path).to.equal("/dashboard/");
    }
    const missing = await fetch(`${on.mgmt}/dashboard/assets/app-NOTTHERE.js`);
    expect(missing.status).to.equal(404);
    expect(await missing.json()).to.include({ code: "NOT_FOUND" });
  });

  it("the data routes still need the credential", async () => {
    expect((await fetch(`${on.mgmt}/cluster/members`)).status).to.equal(401);
  });

  it("SERVICE_DASHBOARD=off answers 404 on /, the page and the assets", async () => {
    for (const path of ["/", "/dashboard/", `/dashboard/assets/${script}`]) {
      const r = await fetch(`${off.mgmt}${path}`, { redirect: "manual" });
      expect(r.status, path).to.equal(404);
      const body = (await r.json()) as { code: string; error: string };
      expect(body.code).to.equal("NOT_FOUND");
      expect(body.error).to.include("SERVICE_DASHBOARD=off");
    }
  });
  /** The security headers every dashboard answer carries. */
  function expectSecured(r: Reply, what: string): void {
    expect(r.headers["content-security-policy"], `${what}: CSP`).to.equal(CSP);
    expect(r.headers["x-content-type-options"], `${what}: nosniff`).to.equal("nosniff");
    expect(r.headers["referrer-policy"], `${what}: Referrer-Policy`).to.equal("no-referrer");
  }

  it("redirects and 404 answers carry the CSP, nosniff and Referrer-Policy too", async () => {
    for (const path of ["/", "/dashboard"]) {
      const r = await call(`${on.mgmt}${path}`);
      expect(r.status, path).to.equal(302);
      expectSecured(r, `302 ${path}`);
    }
    const missing = await call(`${on.mgmt}/dashboard/assets/app-NOTTHERE.js`);
    expect(missing.status).to.equal(404);
    expect(missing.json()).to.include({ code: "NOT_FOUND" });
    expectSecured(missing, "404 unknown asset");
    for (const path of ["/", "/dashboard", "/dashboard/", `/dashboard/assets/${script}`]) {
      const r = await call(`${off.mgmt}${path}`);
      expect(r.status, path).to.equal(404);
      expectSecured(r, `404 ${path} (dashboard off)`);
    }
  });

  it("If-None-Match is compared weakly over a list: a list holding the ETag, its weak form and * are 304; other tags 200", async () => {
    for (const path of ["/dashboard/", `/dashboard/assets/${script}`]) {
      const first = await call(`${on.mgmt}${path}`);
      const etag = first.headers.etag as string;
      expect(etag, path).to.match(/^"[^"]+"$/);
      for (const value of [etag, `"other", ${etag}`, `W/${etag}`, `"a",W/${etag} , "b"`, "*"]) {
        const r = await call(`${on.mgmt}${path}`, { headers: { "if-none-match": value } });
        expect(r.status, `${path} If-None-Match: ${value}`).to.equal(304);
        expect(r.headers.etag, `${path} If-None-Match: ${value}`).to.equal(etag);
        expect(r.body.length).to.equal(0);
      }
      for (const value of ['"other"', `W/"x${etag.slice(1)}`, `"a", "b"`, "not a tag"]) {
        const r = await call(`${on.mgmt}${path}`, { headers: { "if-none-match": value } });
        expect(r.status, `${path} If-None-Match: ${value}`).to.equal(200);
      }
    }
  });

  it("the gzip and the plain body of a file have ETags of their own, each revalidating only itself, with Vary: Accept-Encoding", async () => {
    for (const path of ["/dashboard/", `/dashboard/assets/${script}`, `/dashboard/assets/${sheet}`]) {
      const plain = await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "identity" } });
      const gz = await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "gzip" } });
      expect(plain.headers["content-encoding"], path).to.equal(undefined);
      expect(gz.headers["content-encoding"], path).to.equal("gzip");
      expect(gunzipSync(gz.body).equals(plain.body), `${path}: the same content`).to.equal(true);
      for (const r of [plain, gz]) expect(r.headers.vary, path).to.match(/Accept-Encoding/i);
      const plainTag = plain.headers.etag as string;
      const gzTag = gz.headers.etag as string;
      expect(gzTag, `${path}: one ETag per representation`).to.not.equal(plainTag);
      // Each tag names its own bytes: the other representation is sent in full, with its own tag.
      const gzAgainstPlainTag = await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "gzip", "if-none-match": plainTag } });
      expect(gzAgainstPlainTag.status, path).to.equal(200);
      expect(gzAgainstPlainTag.headers.etag).to.equal(gzTag);
      const plainAgainstGzTag = await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "identity", "if-none-match": gzTag } });
      expect(plainAgainstGzTag.status, path).to.equal(200);
      expect(plainAgainstGzTag.headers.etag).to.equal(plainTag);
      expect((await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "gzip", "if-none-match": gzTag } })).status, path).to.equal(304);
      expect((await call(`${on.mgmt}${path}`, { headers: { "accept-encoding": "identity", "if-none-match": plainTag } })).status, path).to.equal(304);
    }
  });
});
