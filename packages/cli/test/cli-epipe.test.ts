// The command in a pipeline whose reader stops early (`hypercache get k --out - | head -c 10`,
// `hypercache watch | head -1`): it exits 0 without a word on stderr, not with an EPIPE stack trace.
// A stdout that cannot be written for another reason (a full disk) is one line and exit code 2.
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { CLI_BIN } from "./cli-harness.js";

/** Runs the built binary and closes its stdout after the first chunk, as `head` does. */
function runUntilFirstChunk(argv: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...argv], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stdout.once("data", () => child.stdout.destroy());
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe("cli in a pipeline closed early", function () {
  this.timeout(30_000);
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (req.url?.startsWith("/cluster/events")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const beat = () => res.write(`event: heartbeat\ndata: ${JSON.stringify({ "dist.members.alive": 1, pad: "x".repeat(16 * 1024) })}\n\n`);
        const t = setInterval(beat, 5);
        res.on("close", () => clearInterval(t));
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "x-cache-version": "1", "x-cache-node": "n1" });
      res.end(Buffer.alloc(8 * 1024 * 1024, 0x61));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("get --out - exits 0 quietly when stdout's reader is gone", async () => {
    const r = await runUntilFirstChunk(["-e", url, "get", "k", "--out", "-"]);
    expect(r.stderr).to.not.match(/EPIPE|Error/);
    expect(r.code).to.equal(0);
  });

  it("get --out - (or any output) when stdout cannot be written (a full disk: /dev/full) prints one line, no stack trace, and exits 2", async () => {
    const fd = openSync("/dev/full", "w");
    const run = (argv: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI_BIN, ...argv], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", fd, "pipe"] });
        let stderr = "";
        child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
        child.on("close", (code) => resolve({ code, stderr }));
      });
    try {
      // Before: the ENOSPC 'error' event was rethrown (a stack trace, exit 1); a short output exited 0.
      for (const argv of [["-e", url, "get", "k", "--out", "-"], ["--version"]]) {
        const r = await run(argv);
        expect(r.stderr, "a stack trace instead of one hypercache: line").to.not.match(/^\s+at /m);
        expect(r.stderr, argv.join(" ")).to.match(/^hypercache: stdout: .*ENOSPC.*\n$/);
        expect(r.stderr.trim().split("\n")).to.have.length(1);
        expect(r.code, argv.join(" ")).to.equal(2);
      }
    } finally {
      closeSync(fd);
    }
  });

  it("watch exits 0 quietly when stdout's reader is gone", async () => {
    const r = await runUntilFirstChunk(["-e", url, "--mgmt-endpoints", url, "watch"]);
    expect(r.stderr).to.not.match(/EPIPE|Error/);
    expect(r.code).to.equal(0);
  });
});
