import { expect } from "chai";
import { prefersJson } from "../../../src/http/item-routes.js";

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
