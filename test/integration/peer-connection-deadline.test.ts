// A connection to the dist listener must carry a request the gate lets through within the peer
// timeout (5 s) of opening for HTTP/2, twice that for HTTP/1.1, or the node closes it. Without that, a caller with no token held
// one of the 4,096 peer connections for the 60 s idle timeout with a connection that said
// nothing, or whose protocol error had made Node stop reading it (it sat in CLOSE-WAIT, the
// caller's close unseen): about 70 connections a second filled the listener.
import { expect } from "chai";
import { PEER_TIMEOUT_MS } from "../../src/core/limits.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { converse, FLAG, FRAME, frame, headerBlock, PREFACE } from "../helpers/h2-frames.js";

const TOKEN = "peer-token-deadline";

/** Opens a connection, writes `bytes`, and resolves with how long the node took to close it (or undefined if it did not within `waitMs`). */
const closedAfter = async (port: number, bytes: Buffer, waitMs: number) => (await converse(port, bytes, waitMs)).closedAfterMs;

const request = (token: string) =>
  frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([[":method", "GET"], [":scheme", "http"], [":path", "/health"], [":authority", "127.0.0.1"], ["authorization", `Bearer ${token}`]]));
const settings = frame(FRAME.SETTINGS, 0, 0);

describe("dist listener: a connection that carries no authenticated request is closed after the peer timeout", function () {
  this.timeout(40_000);
  let node: NodeProcess;
  before(async () => {
    node = await startNode({ id: "cd1", env: { SERVICE_PEER_TOKEN: TOKEN } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("closes a silent session, one whose requests were refused, and one after a protocol error, within the peer timeout; keeps an authenticated one", async () => {
    const wait = PEER_TIMEOUT_MS + 2_000;
    // HTTP/1.1 connections get twice the peer timeout: an incomplete head gets its 400 first
    const h1Wait = 2 * PEER_TIMEOUT_MS + 2_000;
    const h1 = (token: string) => Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const [silent, refused, protocolError, authenticated, h1Refused, h1Authenticated] = await Promise.all([
      closedAfter(node.distPort, Buffer.concat([PREFACE, settings]), wait),
      closedAfter(node.distPort, Buffer.concat([PREFACE, settings, request("wrong")]), wait),
      // DATA on stream 0: Node answers GOAWAY and stops reading the socket
      closedAfter(node.distPort, Buffer.concat([PREFACE, settings, frame(FRAME.DATA, 0, 0, Buffer.from("x"))]), wait),
      closedAfter(node.distPort, Buffer.concat([PREFACE, settings, request(TOKEN)]), wait),
      // HTTP/1.1 keep-alive: a refused request leaves the connection open, an accepted one trusts it
      closedAfter(node.distPort, h1("wrong"), h1Wait),
      closedAfter(node.distPort, h1(TOKEN), h1Wait),
    ]);
    expect(h1Authenticated, "the authenticated HTTP/1.1 connection stays open").to.equal(undefined);
    for (const [what, ms, deadline] of [["silent", silent, PEER_TIMEOUT_MS], ["refused", refused, PEER_TIMEOUT_MS], ["protocol error", protocolError, PEER_TIMEOUT_MS], ["HTTP/1.1 refused", h1Refused, 2 * PEER_TIMEOUT_MS]] as const) {
      expect(ms, `${what}: closed by the node`).to.be.a("number");
      expect(ms as number, what).to.be.within(deadline - 500, deadline + 1_500);
    }
    expect(authenticated, "the authenticated session stays open").to.equal(undefined);
    expect(node.child.exitCode).to.equal(null);
  });
});
