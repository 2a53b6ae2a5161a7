// How PeerSession opens a connection: TCP first, with Node's own choice among the host's
// addresses, then TLS and HTTP/2 on the connected socket. Found by a review of f4b39ea, which
// wrapped the socket in TLS before it connected: Node tries a host's addresses one after another
// on a new handle each, TLS kept the first one, and a TLS peer whose first address refused
// crashed the node in native code (SIGSEGV), while one whose first address dropped SYNs never
// connected. Without the fix the first test ends the mocha process.
import dns from "node:dns";
import net from "node:net";
import tls from "node:tls";
import { expect } from "chai";
import { systemTimers } from "../../../src/core/clock.js";
import { PeerSession } from "../../../src/peer/peer-session.js";
import { makeTestCerts, type TestCerts } from "../../helpers/certs.js";

const opts = { timers: systemTimers, connectTimeoutMs: 2_000, idleTimeoutMs: 60_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as net.AddressInfo).port;
}

/** A port nothing listens on (127.0.0.1 and ::1 refuse it). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

/** Runs `body` while "localhost" resolves to `addresses` in that order; collects uncaught exceptions. */
async function resolvingTo(addresses: { address: string; family: number }[], body: () => Promise<void>): Promise<string[]> {
  const realLookup = dns.lookup;
  const seen: unknown[] = [];
  const onErr = (e: unknown) => seen.push(e);
  (dns as { lookup: unknown }).lookup = (host: string, options: unknown, cb: unknown) => {
    if (host !== "localhost") return (realLookup as (...a: unknown[]) => void)(host, options, cb);
    const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
    const first = addresses[0] as { address: string; family: number };
    process.nextTick(() => (all ? (cb as (e: null, a: object[]) => void)(null, addresses) : (cb as (e: null, a: string, f: number) => void)(null, first.address, first.family)));
  };
  process.prependListener("uncaughtException", onErr);
  try {
    await body();
    await sleep(100);
  } finally {
    (dns as { lookup: unknown }).lookup = realLookup;
    process.off("uncaughtException", onErr);
  }
  return seen.map(String);
}

describe("peer/peer-session: opening a connection", () => {
  let certs: TestCerts;
  before(() => (certs = makeTestCerts()));
  after(() => certs.cleanup());

  it("a TLS peer whose host name's first address refuses and second accepts is reached on the second, nothing uncaught", async () => {
    const accepted: string[] = [];
    const server = tls.createServer({ cert: certs.pem(certs.server.cert), key: certs.pem(certs.server.key), ALPNProtocols: ["h2"] }, (s) => {
      accepted.push(`alpn ${String(s.alpnProtocol)}`);
      s.on("error", () => undefined);
      s.on("data", () => undefined);
    });
    const port = await listen(server);
    try {
      // ::1 refuses (nothing listens there on this port), 127.0.0.1 accepts
      const seen = await resolvingTo(
        [
          { address: "::1", family: 6 },
          { address: "127.0.0.1", family: 4 },
        ],
        async () => {
          const session = new PeerSession(`https://localhost:${port}/internal`, { ...opts, connect: () => ({ ca: certs.pem(certs.ca.cert) }) });
          const got = await session.request("POST", "/x", {}, {}).then(
            (stream) => {
              stream.on("error", () => undefined);
              return "connected";
            },
            (e: unknown) => String(e),
          );
          session.close();
          expect(got).to.equal("connected");
        },
      );
      expect(seen).to.deep.equal([]);
      expect(accepted).to.deep.equal(["alpn h2"]);
    } finally {
      server.close();
    }
  });

  it("a TLS peer down on every address fails the call cleanly", async () => {
    const port = await freePort();
    const seen = await resolvingTo(
      [
        { address: "::1", family: 6 },
        { address: "127.0.0.1", family: 4 },
      ],
      async () => {
        const session = new PeerSession(`https://localhost:${port}/internal`, { ...opts, connect: () => ({ ca: certs.pem(certs.ca.cert) }) });
        const err = await session.request("POST", "/x", {}, {}).then(() => undefined, (e: unknown) => e);
        session.close();
        expect(String(err)).to.match(/cannot connect to peer .*ECONNREFUSED/);
      },
    );
    expect(seen).to.deep.equal([]);
  });

  it("TLS options that tls.connect refuses (a key that does not parse) fail the call and close the TCP connection, nothing uncaught", async () => {
    const ends: string[] = [];
    const server = net.createServer((s) => {
      ends.push("accepted");
      s.on("error", () => undefined);
      s.on("close", () => ends.push("closed"));
    });
    const port = await listen(server);
    const bad = () => ({ ca: certs.pem(certs.ca.cert), cert: certs.pem(certs.server.cert), key: Buffer.from("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n") });
    try {
      for (const p of [port, await freePort()]) {
        const seen = await resolvingTo([{ address: "127.0.0.1", family: 4 }], async () => {
          const session = new PeerSession(`https://127.0.0.1:${p}/internal`, { ...opts, connect: bad });
          const err = await session.request("POST", "/x", {}, {}).then(() => undefined, (e: unknown) => e);
          session.close();
          expect(String(err), `port ${p}`).to.match(/cannot connect to peer/);
          for (let i = 0; i < 50 && ends.length === 1; i++) await sleep(10);
        });
        expect(seen, `port ${p}`).to.deep.equal([]);
      }
      expect(ends, "the one connection made is closed").to.deep.equal(["accepted", "closed"]);
    } finally {
      server.close();
    }
  });
});
