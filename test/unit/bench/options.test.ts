// Options of npm run bench.
import { expect } from "chai";
import { DEFAULTS, parseOptions, PARTS } from "../../../bench/options.js";

describe("bench: options", () => {
  it("runs every part with the defaults when given nothing", () => {
    const o = parseOptions([]);
    expect([...o.only]).to.deep.equal([...PARTS]);
    expect(o).to.include({ seconds: DEFAULTS.seconds, rounds: DEFAULTS.rounds, connections: 50 });
    expect(o.json).to.equal(undefined);
  });

  it("reads --only, --seconds, --rounds, --connections and --json, with or without '='", () => {
    const o = parseOptions(["--only", "get,p99", "--seconds=3", "--rounds", "1", "--connections", "64", "--json", "out.json"]);
    expect([...o.only]).to.deep.equal(["get", "p99"]);
    expect(o).to.include({ seconds: 3, rounds: 1, connections: 64, json: "out.json" });
  });

  it("refuses an unknown part, a non-positive number and an unknown option", () => {
    expect(() => parseOptions(["--only", "get,cluster"])).to.throw(/"cluster"/);
    expect(() => parseOptions(["--seconds", "0"])).to.throw(/--seconds needs a positive integer/);
    expect(() => parseOptions(["--rounds", "two"])).to.throw(/--rounds/);
    expect(() => parseOptions(["--fast"])).to.throw(/unknown option "--fast"/);
  });
});
