// A memory-safety check under valgrind: closing a PeerSession from a reaction to an answer that
// ended on that session must not make Node's HTTP/2 code touch freed memory. Before the fix,
// PeerSession destroyed the session in the caller's stack, inside nghttp2's receive callback;
// Node 20 then sent a stream reset at once, nghttp2 freed the stream whose last DATA frame it was
// processing and wrote its shut flags into the freed block (valgrind: 16 invalid reads and writes
// in 5 rounds). In production that corrupted the glibc heap, and nodes aborted at exit with
// "corrupted size vs. prev_size" after a clean drain (three sightings in full chaos runs). Two
// stream resets with a code other than CANCEL in the same reaction do the same (20 before).
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(new URL("./fixtures/session-teardown.mjs", import.meta.url));

describe("peer session teardown under valgrind: no access to freed HTTP/2 memory", function () {
  this.timeout(180_000);

  const underValgrind = (mode: string) => {
    const run = spawnSync(
      "valgrind",
      ["--tool=memcheck", "--smc-check=all-non-file", "--undef-value-errors=no", "--error-exitcode=99", process.execPath, FIXTURE, "5", mode],
      { encoding: "utf8", timeout: 170_000 },
    );
    if (run.error) throw new Error(`valgrind could not run (.ci/run installs it): ${run.error.message}`);
    const summary = /ERROR SUMMARY: (\d+) errors/.exec(run.stderr);
    expect(run.stdout, run.stderr.slice(-2000)).to.contain(`rounds 5 ${mode}`);
    expect(summary?.[1], run.stderr.slice(-4000)).to.equal("0");
    expect(run.status).to.equal(0);
  };

  it("closing the session in the reaction to an answer that ended on it reads and writes no freed memory", () => underValgrind("session"));

  it("resetting two of its streams with INTERNAL_ERROR in that reaction (Connect's failed calls) reads and writes no freed memory", () => underValgrind("resets"));
});
