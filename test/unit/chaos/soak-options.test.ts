import { expect } from "chai";
import { parseSoakOptions } from "../../soak/options.js";

describe("soak command line", () => {
  it("defaults to 600 s at 500 ops/s, seed 1, into soak-out", () => {
    expect(parseSoakOptions([])).to.deep.equal({ kind: "run", options: { durationS: 600, rate: 500, seed: 1, out: "soak-out", maxDataBytes: undefined } });
  });

  it("takes every option CI and the README use", () => {
    const c = parseSoakOptions(["--seconds", "90", "--seed", "7", "--rate", "200", "--out", "/tmp/s", "--max-data-bytes", "64MiB"]);
    expect(c).to.deep.equal({ kind: "run", options: { durationS: 90, rate: 200, seed: 7, out: "/tmp/s", maxDataBytes: "64MiB" } });
    expect(parseSoakOptions(["--help"])).to.deep.equal({ kind: "help" });
  });

  it("refuses what would run NaN seconds or fail later with a stack trace, naming the option", () => {
    expect(() => parseSoakOptions(["--seconds", "ten"])).to.throw(/--seconds expects an integer of at least 30, got "ten"/);
    expect(() => parseSoakOptions(["--seconds", "5"])).to.throw(/--seconds/);
    expect(() => parseSoakOptions(["--rate", "0"])).to.throw(/--rate/);
    expect(() => parseSoakOptions(["--seed", "-1"])).to.throw(/--seed/);
    expect(() => parseSoakOptions(["--seed", "1e3"])).to.throw(/--seed/);
    expect(() => parseSoakOptions(["--out", ""])).to.throw(/--out/);
    expect(() => parseSoakOptions(["--bogus"])).to.throw(/bogus/);
    expect(() => parseSoakOptions(["extra"])).to.throw();
  });
});
