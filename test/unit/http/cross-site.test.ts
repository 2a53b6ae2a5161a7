// checkSameSite: which requests a browser sent from another site are refused.
import { expect } from "chai";
import { checkSameSite } from "../../../src/http/cross-site.js";
import type { CacheError } from "../../../src/core/errors.js";

function verdict(method: string, headers: Record<string, string>): string {
  try {
    checkSameSite(method, headers);
    return "pass";
  } catch (e) {
    return (e as CacheError).code;
  }
}

describe("http/cross-site", () => {
  it("safe methods pass whatever the browser says", () => {
    for (const m of ["GET", "HEAD", "OPTIONS"]) expect(verdict(m, { origin: "http://evil.example", "sec-fetch-site": "cross-site", host: "n1:8080" })).to.equal("pass");
  });

  it("a write without Origin or Sec-Fetch-Site (a program) passes", () => {
    for (const m of ["POST", "PUT", "DELETE", "PATCH"]) expect(verdict(m, { host: "n1:8080" })).to.equal("pass");
  });

  it("a write whose Origin is the host it was sent to passes, default ports and IPv6 included", () => {
    expect(verdict("POST", { origin: "http://n1:8080", host: "n1:8080", "sec-fetch-site": "same-origin" })).to.equal("pass");
    expect(verdict("POST", { origin: "https://cache.example", host: "cache.example" })).to.equal("pass");
    expect(verdict("POST", { origin: "http://[::1]:9000", host: "[::1]:9000" })).to.equal("pass");
    expect(verdict("DELETE", { origin: "http://N1:8080", host: "n1:8080" }), "host names compare without case").to.equal("pass");
    expect(verdict("POST", { "sec-fetch-site": "none", host: "n1:8080" }), "typed by the user").to.equal("pass");
  });

  it("a write from another origin, another port, an opaque origin or another site is FORBIDDEN", () => {
    expect(verdict("POST", { origin: "http://evil.example", host: "n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("POST", { origin: "http://n1:8081", host: "n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("POST", { origin: "null", host: "n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("PUT", { origin: "http://n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("POST", { "sec-fetch-site": "cross-site", host: "n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("POST", { "sec-fetch-site": "same-site", origin: "http://n1:8080", host: "n1:8080" })).to.equal("FORBIDDEN");
    expect(verdict("POST", { origin: "http://evil.example/%%%", host: "n1:8080" })).to.equal("FORBIDDEN");
  });
});
