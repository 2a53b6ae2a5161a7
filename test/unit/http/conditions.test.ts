import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { conditionOf, itemConditionOf, notModified, readConditionOf, writeConditionOf } from "../../../src/http/conditions.js";

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof CacheError ? err.code : "not a CacheError";
  }
}

describe("http/conditions", () => {
  it("a write without the headers is unconditional", () => {
    expect(writeConditionOf({}, "put")).to.equal(undefined);
  });

  it("If-Match (list or *) on PUT, DELETE and touch; If-None-Match * on PUT", () => {
    expect(writeConditionOf({ "if-match": '"a", W/"b"' }, "delete")).to.deep.equal({ ifMatch: ['"a"', 'W/"b"'] });
    expect(writeConditionOf({ "if-match": "*" }, "touch")).to.deep.equal({ ifMatch: "*" });
    expect(writeConditionOf({ "if-none-match": "*" }, "put")).to.deep.equal({ ifNoneMatch: "*" });
  });

  it("400: both headers, If-None-Match with a list, If-None-Match on DELETE or touch, malformed values", () => {
    expect(code(() => writeConditionOf({ "if-match": "*", "if-none-match": "*" }, "put"))).to.equal("BAD_REQUEST");
    expect(code(() => writeConditionOf({ "if-none-match": '"a"' }, "put"))).to.equal("BAD_REQUEST");
    expect(code(() => writeConditionOf({ "if-none-match": "*" }, "delete"))).to.equal("BAD_REQUEST");
    expect(code(() => writeConditionOf({ "if-none-match": "*" }, "touch"))).to.equal("BAD_REQUEST");
    expect(code(() => writeConditionOf({ "if-match": "abc" }, "put"))).to.equal("BAD_REQUEST");
    expect(code(() => writeConditionOf({ "if-match": "" }, "delete"))).to.equal("BAD_REQUEST");
  });

  it("batch items: if_match / if_none_match with the same rules, and non-strings are 400", () => {
    expect(itemConditionOf({ key: "k" }, "put")).to.equal(undefined);
    expect(itemConditionOf({ if_match: '"a"' }, "put")).to.deep.equal({ ifMatch: ['"a"'] });
    expect(itemConditionOf({ if_none_match: "*" }, "put")).to.deep.equal({ ifNoneMatch: "*" });
    expect(code(() => itemConditionOf({ if_match: 5 }, "put"))).to.equal("BAD_REQUEST");
    expect(code(() => itemConditionOf({ if_none_match: true }, "put"))).to.equal("BAD_REQUEST");
    expect(code(() => itemConditionOf({ if_none_match: "*" }, "delete"))).to.equal("BAD_REQUEST");
    expect(code(() => conditionOf("*", "*", "put", { ifMatch: "if_match", ifNoneMatch: "if_none_match" }))).to.equal("BAD_REQUEST");
  });

  it("reads: If-None-Match parsed once; 304 only for a listed strong tag or *", () => {
    expect(readConditionOf({})).to.equal(undefined);
    expect(code(() => readConditionOf({ "if-none-match": "nope" }))).to.equal("BAD_REQUEST");
    const c = readConditionOf({ "if-none-match": '"x", "y"' });
    expect(notModified(c, '"y"')).to.equal(true);
    expect(notModified(c, '"z"')).to.equal(false);
    expect(notModified(readConditionOf({ "if-none-match": 'W/"y"' }), '"y"')).to.equal(false);
    expect(notModified(readConditionOf({ "if-none-match": "*" }), '"y"')).to.equal(true);
    expect(notModified(undefined, '"y"')).to.equal(false);
  });
});
