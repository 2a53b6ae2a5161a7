// The DNS rebinding guard: which names a browser request holding no credential may be sent to,
// and that programs and callers with a credential are never refused for the name.
import { expect } from "chai";
import { anonymousIdentity, makeIdentity } from "../../../src/auth/index.js";
import { openAuthenticator } from "../../../src/auth/authenticator.js";
import { loadConfig } from "../../../src/config/index.js";
import type { CacheError } from "../../../src/core/errors.js";
import { checkAnonymousHost, HostAllowList, hostAllowListOf, rebindingGuard } from "../../../src/http/rebinding-guard.js";
import type { IncomingMessage } from "node:http";

const BROWSER = { "sec-fetch-site": "same-origin" };

function verdict(list: HostAllowList, headers: Record<string, string>, identity = anonymousIdentity()): string {
  try {
    checkAnonymousHost(identity, headers, list);
    return "pass";
  } catch (e) {
    const err = e as CacheError;
    return `${err.code}:${String(err.details?.reason)}`;
  }
}

describe("http/rebinding-guard", () => {
  const none = new HostAllowList([]);

  it("IP addresses, localhost and *.localhost are always the node's names, with or without a port", () => {
    for (const host of ["127.0.0.1", "127.0.0.1:8080", "10.1.2.3:80", "[::1]:8080", "[fe80::1]", "localhost", "LOCALHOST:8080", "dash.localhost:8081", "localhost.:8080"]) {
      expect([host, verdict(none, { ...BROWSER, host })]).to.deep.equal([host, "pass"]);
    }
  });

  it("any other name in a browser request without a credential is FORBIDDEN host_not_allowed", () => {
    for (const host of ["attacker.example", "attacker.example:8080", "localhost.attacker.example", "127.0.0.1.nip.io:8080", "[::1", "evillocalhost:1"]) {
      expect([host, verdict(none, { ...BROWSER, host })]).to.deep.equal([host, "FORBIDDEN:host_not_allowed"]);
    }
  });

  it("what marks a browser: Sec-Fetch-Site, Origin or a Mozilla/ User-Agent; without any, a program passes (Node's fetch included)", () => {
    const host = "attacker.example:8080";
    // What Node's fetch (undici) sends: sec-fetch-mode without sec-fetch-site, user-agent "node".
    expect(verdict(none, { host, "sec-fetch-mode": "cors", "user-agent": "node", "accept-language": "*" })).to.equal("pass");
    const markers: Record<string, string>[] = [{ "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" }, { origin: "http://attacker.example:8080" }, { "user-agent": "Mozilla/5.0 (Windows NT 10.0)" }];
    for (const marker of markers) {
      expect(verdict(none, { host, ...marker })).to.equal("FORBIDDEN:host_not_allowed");
    }
    expect(verdict(none, { host, "user-agent": "curl/8.5.0" })).to.equal("pass");
    expect(verdict(none, { host })).to.equal("pass");
  });

  it("a caller with a credential is never refused for the name", () => {
    expect(verdict(none, { ...BROWSER, host: "attacker.example" }, makeIdentity("token", "ci", ["read"]))).to.equal("pass");
  });

  it("allowed names: exact, .suffix (itself and its subdomains, not a look-alike), * (any)", () => {
    const list = new HostAllowList(["cache.example.com", ".internal.example"]);
    const ok = ["cache.example.com:8080", "Cache.Example.Com", "internal.example", "a.b.internal.example:1"];
    const refused = ["www.cache.example.com", "evilinternal.example", "cache.example.com.evil", "example.com"];
    for (const host of ok) expect([host, verdict(list, { ...BROWSER, host })]).to.deep.equal([host, "pass"]);
    for (const host of refused) expect([host, verdict(list, { ...BROWSER, host })]).to.deep.equal([host, "FORBIDDEN:host_not_allowed"]);
    expect(verdict(new HostAllowList(["*"]), { ...BROWSER, host: "anything.example" })).to.equal("pass");
  });

  it("a node's own addresses and advertised URLs are its names", () => {
    const config = loadConfig(
      { SERVICE_API_ADDR: "cache-0.local:8080", SERVICE_DIST_ADDR: "cache-0.peers.svc:7946", SERVICE_MGMT_ADVERTISE_URL: "https://ops.example.net:9443", SERVICE_ALLOWED_HOSTS: "extra.example" },
      { hostname: "box", memoryBytes: 1 << 30 },
    );
    const list = hostAllowListOf(config);
    for (const host of ["cache-0.local:8080", "cache-0.peers.svc", "ops.example.net:9443", "extra.example"]) expect([host, verdict(list, { ...BROWSER, host })]).to.deep.equal([host, "pass"]);
    expect(verdict(list, { ...BROWSER, host: "other.example" })).to.equal("FORBIDDEN:host_not_allowed");
  });

  it("rebindingGuard checks the identity the authenticator resolved, on the sync path", () => {
    const guarded = rebindingGuard(openAuthenticator(), none);
    const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
    expect(() => guarded.authenticate(req({ ...BROWSER, host: "attacker.example" }))).to.throw(/DNS rebinding/);
    expect(guarded.authenticate(req({ host: "attacker.example" }))).to.deep.include({ kind: "anonymous" });
    expect([guarded.enabled, guarded.methods]).to.deep.equal([false, []]);
  });

  it("SERVICE_ALLOWED_HOSTS takes names, .suffixes and *; anything else is refused at start", () => {
    const load = (v: string) => loadConfig({ SERVICE_ALLOWED_HOSTS: v }, { hostname: "box", memoryBytes: 1 << 30 }).allowedHosts;
    expect(load(" a.example , .b.example,*")).to.deep.equal(["a.example", ".b.example", "*"]);
    expect(load("")).to.deep.equal([]);
    for (const bad of ["http://a.example", "a.example:8080", "a..example", "-a.example", "a b"]) expect(() => load(bad), bad).to.throw(/SERVICE_ALLOWED_HOSTS/);
  });
});
