import { expect } from "chai";
import { originForm, prefersJson } from "../../../src/http/item-routes.js";

describe("http/item-routes prefersJson", () => {
  it("serves raw bytes when there is no Accept header", () => {
    expect(prefersJson(undefined)).to.equal(false);
  });

  it("serves the JSON envelope for Accept: application/json", () => {
    expect(prefersJson("application/json")).to.equal(true);
    expect(prefersJson("application/json; charset=utf-8")).to.equal(true);
  });

  it("serves raw bytes for Accept: application/octet-stream, */* and other types", () => {
    expect(prefersJson("application/octet-stream")).to.equal(false);
    expect(prefersJson("*/*")).to.equal(false);
    expect(prefersJson("text/html")).to.equal(false);
    expect(prefersJson("")).to.equal(false);
  });

  it("prefers JSON when it is listed before octet-stream", () => {
    expect(prefersJson("application/json, application/octet-stream")).to.equal(true);
    expect(prefersJson("text/plain, application/json, */*")).to.equal(true);
  });

  it("prefers raw bytes when octet-stream is listed before JSON", () => {
    expect(prefersJson("application/octet-stream, application/json")).to.equal(false);
  });

  it("does not serve JSON when the client refuses it with q=0", () => {
    // RFC 9110 section 12.4.2: a weight of 0 means "not acceptable".
    expect(prefersJson("application/json;q=0, application/octet-stream")).to.equal(false);
    expect(prefersJson("application/json;q=0")).to.equal(false);
  });

  it("matches the media type case-insensitively", () => {
    // RFC 9110 section 8.3.1: type and subtype are case-insensitive.
    expect(prefersJson("Application/JSON")).to.equal(true);
  });
});

describe("http/item-routes originForm", () => {
  it("reads an absolute-form target as its path and query, as Koa does", () => {
    expect(originForm("http://guards/v1/cache/abs")).to.equal("/v1/cache/abs");
    expect(originForm("HTTPS://[::1]:8080/v1/cache/k?ttl=5s")).to.equal("/v1/cache/k?ttl=5s");
    expect(originForm("http://guards")).to.equal("/");
    expect(originForm("http://guards?x")).to.equal("?x");
  });

  it("drops a fragment, with anything after it, as Koa does", () => {
    expect(originForm("/v1/cache/fr#ag")).to.equal("/v1/cache/fr");
    expect(originForm("/v1/cache/fr#ag?ttl=5s")).to.equal("/v1/cache/fr");
    expect(originForm("/v1/cache/fr?ttl=5s#x")).to.equal("/v1/cache/fr?ttl=5s");
  });

  it("gives the usual origin form back as it is (the same string)", () => {
    const target = "/v1/cache/k%2Fx?ttl=5s";
    expect(originForm(target)).to.equal(target);
    expect(originForm("*")).to.equal("*");
  });
});
