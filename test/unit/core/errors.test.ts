import { expect } from "chai";
import { badRequest, CacheError, httpStatusFor, isErrorCode, toCacheError, type ErrorCode } from "../../../src/core/errors.js";

const TABLE: Array<[ErrorCode, number]> = [
  ["BAD_REQUEST", 400],
  ["UNAUTHORIZED", 401],
  ["FORBIDDEN", 403],
  ["NOT_FOUND", 404],
  ["CONFLICT", 409],
  ["PRECONDITION_FAILED", 412],
  ["PAYLOAD_TOO_LARGE", 413],
  ["UNSUPPORTED_MEDIA_TYPE", 415],
  ["TOO_MANY_REQUESTS", 429],
  ["NOT_IMPLEMENTED", 501],
  ["DRAINING", 503],
  ["QUORUM_FAILED", 503],
  ["UNAVAILABLE", 503],
  ["INTERNAL", 500],
];

describe("core/errors", () => {
  describe("httpStatusFor", () => {
    for (const [code, status] of TABLE) {
      it(`maps ${code} to ${status}`, () => {
        expect(httpStatusFor(code)).to.equal(status);
      });
    }
  });

  describe("isErrorCode", () => {
    it("accepts every code of the table", () => {
      for (const [code] of TABLE) expect(isErrorCode(code), code).to.equal(true);
    });

    it("rejects unknown strings, lower case and inherited object properties", () => {
      for (const s of ["", "bad_request", "TEAPOT", "OK", "toString", "constructor", "__proto__", "hasOwnProperty"]) {
        expect(isErrorCode(s), s).to.equal(false);
      }
    });
  });

  describe("CacheError", () => {
    it("carries code, message, details and the matching status", () => {
      const e = new CacheError("DRAINING", "node is draining", { node: "n1" });
      expect(e).to.be.instanceOf(Error);
      expect(e.name).to.equal("CacheError");
      expect(e.code).to.equal("DRAINING");
      expect(e.message).to.equal("node is draining");
      expect(e.details).to.deep.equal({ node: "n1" });
      expect(e.status).to.equal(503);
    });

    it("derives status from the code for every code", () => {
      for (const [code, status] of TABLE) expect(new CacheError(code, "x").status, code).to.equal(status);
    });

    it("keeps a cause when given one", () => {
      const root = new Error("root");
      const e = new CacheError("UNAVAILABLE", "no owner", undefined, { cause: root });
      expect(e.cause).to.equal(root);
      expect(e.details).to.equal(undefined);
    });
  });

  describe("toCacheError", () => {
    it("returns a CacheError unchanged (same object)", () => {
      const e = new CacheError("NOT_FOUND", "gone");
      expect(toCacheError(e)).to.equal(e);
    });

    it("turns an unknown Error into INTERNAL without exposing its message, keeping it as cause", () => {
      const secret = new Error("ECONNREFUSED 10.0.0.7:5432 password=hunter2");
      const e = toCacheError(secret);
      expect(e).to.be.instanceOf(CacheError);
      expect(e.code).to.equal("INTERNAL");
      expect(e.status).to.equal(500);
      expect(e.message).to.not.include("hunter2");
      expect(e.message).to.not.include("ECONNREFUSED");
      expect(e.message).to.equal("internal error");
      expect(e.details).to.equal(undefined);
      expect(e.cause).to.equal(secret);
    });

    it("turns thrown non-Error values (strings, objects, undefined) into INTERNAL as well", () => {
      for (const v of ["boom secret", { message: "secret" }, undefined, null, 42]) {
        const e = toCacheError(v);
        expect(e.code).to.equal("INTERNAL");
        expect(e.message).to.equal("internal error");
        expect(e.cause).to.equal(v);
      }
    });

    it("does not trust an error that merely looks like a CacheError", () => {
      const fake = Object.assign(new Error("forged"), { code: "NOT_FOUND" });
      const e = toCacheError(fake);
      expect(e.code).to.equal("INTERNAL");
      expect(e.message).to.equal("internal error");
    });
  });

  describe("badRequest", () => {
    it("builds a 400 BAD_REQUEST CacheError with message and details", () => {
      const e = badRequest("limit must be positive", { limit: "0" });
      expect(e).to.be.instanceOf(CacheError);
      expect(e.code).to.equal("BAD_REQUEST");
      expect(e.status).to.equal(400);
      expect(e.message).to.equal("limit must be positive");
      expect(e.details).to.deep.equal({ limit: "0" });
    });
  });
});
