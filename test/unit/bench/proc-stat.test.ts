// /proc readings of the bench: CPU ticks from /proc/<pid>/stat, RSS from /proc/<pid>/status,
// and the search for the tools on PATH.
import { expect } from "chai";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cpuMicrosBetween, missingTools, parseProcStat, parseVmRssBytes } from "../../../bench/proc.js";

describe("bench: /proc parsers", () => {
  it("reads utime and stime (fields 14 and 15) of a captured node process", () => {
    const text = readFileSync(new URL("./fixtures/proc-stat-node.txt", import.meta.url), "utf8");
    expect(parseProcStat(text)).to.deep.equal({ utime: 195, stime: 1 });
  });

  it("counts fields from the last parenthesis, so a command name with spaces and ')' does not shift them", () => {
    const line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194304 10 0 0 0 777 33 0 0 20 0 1 0 5 1000 20 0\n";
    expect(parseProcStat(line)).to.deep.equal({ utime: 777, stime: 33 });
  });

  it("refuses a line without the CPU fields", () => {
    expect(() => parseProcStat("4242 (node) S 1 2")).to.throw(/utime/);
  });

  it("turns ticks into microseconds at the given clock rate", () => {
    expect(cpuMicrosBetween({ utime: 100, stime: 10 }, { utime: 250, stime: 60 }, 100)).to.equal(2_000_000);
    expect(cpuMicrosBetween({ utime: 0, stime: 0 }, { utime: 1, stime: 0 }, 250)).to.equal(4000);
  });

  it("reads VmRSS in bytes", () => {
    expect(parseVmRssBytes("Name:\tnode\nVmPeak:\t 999 kB\nVmRSS:\t    2092 kB\nRssAnon:\t 1 kB\n")).to.equal(2092 * 1024);
    expect(() => parseVmRssBytes("Name:\tnode\n")).to.throw(/VmRSS/);
  });
});

describe("bench: tool check", () => {
  it("names the tools that are not executable files on PATH", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "bench-tools-"));
    try {
      writeFileSync(path.join(dir, "wrk"), "#!/bin/sh\n");
      chmodSync(path.join(dir, "wrk"), 0o755);
      writeFileSync(path.join(dir, "cc"), "not executable");
      expect(missingTools(["wrk", "cc", "taskset"], `/nonexistent${path.delimiter}${dir}`)).to.deep.equal(["cc", "taskset"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
