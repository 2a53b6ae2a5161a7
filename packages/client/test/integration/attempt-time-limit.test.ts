// The Node client's time limit of one attempt covers the connection and is precise for short
// limits, on real timers against loopback servers that never answer: one that accepts TCP and
// never starts TLS (the connection is never made), one that reads the request and never answers.
// undici's defaults took 10 s for the first (its connect limit, whatever timeoutMs said) and about
// a second for a 200 ms limit on the second (its timer ticks once a second).
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { AllEndpointsFailedError, HypercacheClient, TimeoutError } from "../../src/node.js";

async function listen(s: net.Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** How long `p` took to settle (ms) and its error. */
async function timed(p: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const t0 = performance.now();
  const error = await p.then(() => undefined, (e: unknown) => e);
  return { ms: performance.now() - t0, error };
}

describe("node client attempt time limit (real timers)", function () {
  this.timeout(30_000);
  const sockets = new Set<net.Socket>();
  const servers: net.Server[] = [];
  const hold = (s: net.Socket) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => sockets.delete(s));
  };
  afterEach(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it("a connection never made (TLS never starts) ends at timeoutMs, not undici's 10 s; the request never left, so a one-node call moves on", async () => {
    const silent = net.createServer(hold);
    servers.push(silent);
    const url = `https://${await listen(silent)}`;
    const c = new HypercacheClient({ endpoints: [url], discovery: false, timeoutMs: 300, maxAttempts: 1 });
    try {
      const r = await timed(c.get("k"));
      expect(r.error).to.be.instanceOf(AllEndpointsFailedError);
      const attempt = (r.error as AllEndpointsFailedError).attempts[0];
      expect(attempt?.error).to.be.instanceOf(TimeoutError);
      expect((attempt?.error.cause as { code?: string }).code).to.equal("UND_ERR_CONNECT_TIMEOUT");
      expect(r.ms).to.be.within(280, 700);
    } finally {
      await c.close();
    }
  });

  for (const limitMs of [150, 400]) {
    it(`headers that never come end the attempt at timeoutMs ${limitMs} (within 150 ms), not at undici's next one-second tick`, async () => {
      const mute = http.createServer((req) => req.resume());
      mute.on("connection", hold);
      servers.push(mute);
      const url = `http://${await listen(mute)}`;
      const c = new HypercacheClient({ endpoints: [url], discovery: false, timeoutMs: limitMs, maxAttempts: 1 });
      try {
        // The first request also makes the connection; the second reuses none (the first's was
        // given up), so both show the whole attempt.
        for (let i = 0; i < 2; i++) {
          const r = await timed(c.get("k"));
          expect((r.error as AllEndpointsFailedError).attempts[0]?.error).to.be.instanceOf(TimeoutError);
          expect(r.ms).to.be.within(limitMs - 20, limitMs + 150);
        }
      } finally {
        await c.close();
      }
    });
  }
});
