// `hypercache watch` as a real process: the watch waits between two streams, when nothing else
// (no socket) holds Node's event loop open, and must still be running when the wait ends. With an
// unref'd reconnect timer Node exited with code 13 (a top-level await that never settled).
import { spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { CLI_BIN } from "./cli-harness.js";

/** A loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Runs the binary; `until` sees stderr as it grows and may interrupt (SIGINT) the process. */
function run(argv: string[], until?: (stderr: string, interrupt: () => void) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...argv], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      until?.(stderr, () => child.kill("SIGINT"));
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("hypercache watch as a process (reconnect waits)", function () {
  this.timeout(30_000);

  it("a node dead at start: it keeps reconnecting (a second attempt after the 1 s wait) until Ctrl-C, exit 130", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const r = await run(["--mgmt-endpoints", url, "watch"], (stderr, interrupt) => {
      if (/attempt 2\)/.test(stderr)) interrupt();
    });
    expect(r.stderr).to.match(/attempt 1\)/).and.match(/attempt 2\)/);
    expect(r.code).to.equal(130);
  });

  it("a stream that ends: it reconnects and goes on printing events", async () => {
    let streams = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      // retry: 100 keeps the wait short; the first stream ends after one event.
      res.write(`retry: 100\n\nevent: heartbeat\ndata: {"dist.members.alive":${++streams}}\n\n`);
      if (streams === 1) res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await run(["--mgmt-endpoints", url, "watch", "--count", "2", "--json"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { data: Record<string, number> }).data["dist.members.alive"])).to.deep.equal([1, 2]);
      expect(r.stderr).to.match(/the stream ended; reconnecting/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
