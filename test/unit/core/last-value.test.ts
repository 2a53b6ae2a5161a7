import { expect } from "chai";
import { lastValue } from "../../../src/core/last-value.js";

describe("core/last-value lastValue", () => {
  it("computes once for a repeated key and again when the key changes", () => {
    const seen: string[] = [];
    const parse = lastValue((k) => (seen.push(k), { k }));
    const first = parse("lease=10s");
    expect(parse("lease=10s")).to.equal(first);
    expect(parse("wait=2s")).to.deep.equal({ k: "wait=2s" });
    expect(parse("lease=10s")).to.not.equal(first);
    expect(seen).to.deep.equal(["lease=10s", "wait=2s", "lease=10s"]);
  });

  it("keeps nothing from a compute that throws: the key is computed (and throws) again, and the last good key stays remembered", () => {
    let calls = 0;
    const parse = lastValue((k) => {
      calls++;
      if (k === "bad") throw new Error("bad query");
      return k.length;
    });
    expect(parse("good")).to.equal(4);
    expect(() => parse("bad")).to.throw("bad query");
    expect(() => parse("bad")).to.throw("bad query");
    expect(parse("good")).to.equal(4);
    expect(calls).to.equal(3);
  });
});
