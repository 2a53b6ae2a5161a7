// The dist (peer) listener of a real node bounds how long a connection may hold it without a
// request: a connection that sends nothing is closed after PEER_TIMEOUT_MS (5 s), and one that
// starts an HTTP/1.1 request head but never finishes it is answered 400 with the JSON envelope
// (the headers timeout, also PEER_TIMEOUT_MS) and closed. Times are measured from the
// connection (or from the last byte sent) to the server's close, and must fall within 4-9 s.
import { expect } from "chai";
import { PEER_TIMEOUT_MS } from "../../src/core/limits.js";
import { call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RawConnection } from "../helpers/raw-http.js";

const LOWER_MS = 4_000;
const UPPER_MS = 9_000;

describe("dist listener: idle and incomplete connections are closed after the peer timeout", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  const open: RawConnection[] = [];
  const connect = async () => {
    const c = await RawConnection.open(node.distPort);
    open.push(c);
    return c;
  };

  before(async () => {
    node = await startNode({ id: "peer-timeouts-1" });
  });
  afterEach(() => {
    for (const c of open.splice(0)) c.destroy();
  });
  after(async () => {
    await node?.stop("SIGKILL");
  });

  it("the bound tested is around PEER_TIMEOUT_MS (5 s)", () => {
    expect(PEER_TIMEOUT_MS).to.equal(5_000);
    expect(PEER_TIMEOUT_MS).to.be.within(LOWER_MS, UPPER_MS);
  });

  it("a connection that sends nothing is closed by the server within 4-9 s, without any bytes sent to it", async () => {
    const c = await connect();
    const connectedAt = await c.connectedAt;
    const closedAt = await c.waitClosed(UPPER_MS + 2_000);
    expect(closedAt - connectedAt, "ms from connect to close").to.be.within(LOWER_MS, UPPER_MS);
    expect(c.pending.toString("latin1"), "bytes received").to.equal("");
  });

  it("a connection that sends only the first bytes of the HTTP/2 preface ('PR') is closed within 4-9 s", async () => {
    const c = await connect();
    await c.write("PR");
    const sentAt = Date.now();
    const closedAt = await c.waitClosed(UPPER_MS + 2_000);
    expect(closedAt - sentAt, "ms from the last byte sent to close").to.be.within(LOWER_MS, UPPER_MS);
  });

  it("an incomplete HTTP/1.1 request head is answered 400 with the envelope 'request headers or body not received in time' and closed, within 4-9 s", async () => {
    const c = await connect();
    const connectedAt = await c.connectedAt;
    await c.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Partial: ");
    const r = await c.read({ timeoutMs: UPPER_MS + 2_000 });
    const answeredAt = Date.now();
    expect(answeredAt - connectedAt, "ms from connect to the answer").to.be.within(LOWER_MS, UPPER_MS);
    expect(r.status, r.body.toString()).to.equal(400);
    expect(r.headers["content-type"]).to.match(/^application\/json/);
    expect(r.headers.connection).to.equal("close");
    expect(r.json()).to.deep.equal({ error: "request headers or body not received in time", code: "BAD_REQUEST" });
    const closedAt = await c.waitClosed(2_000);
    expect(closedAt - connectedAt, "ms from connect to close").to.be.within(LOWER_MS, UPPER_MS);
  });

  it("a request head trickled byte by byte is still cut off at the timeout (the clock does not restart with each byte)", async () => {
    const c = await connect();
    const connectedAt = await c.connectedAt;
    const head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "X-Pad: a\r\n".repeat(100);
    let stop = false;
    // One byte every 100 ms: the whole head would take far longer than the timeout.
    const trickle = (async () => {
      for (const ch of head) {
        if (stop || c.endedByPeer) return;
        await c.write(ch).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      const r = await c.read({ timeoutMs: UPPER_MS + 2_000 });
      expect(Date.now() - connectedAt, "ms from connect to the answer").to.be.within(LOWER_MS, UPPER_MS);
      expect(r.status).to.equal(400);
      expect(r.json()).to.deep.equal({ error: "request headers or body not received in time", code: "BAD_REQUEST" });
    } finally {
      stop = true;
      await trickle;
    }
  });

  it("a complete request is served at once on the same listener (last: it drains the node)", async () => {
    const c = await connect();
    await c.write("POST /dist/drain HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
    const drained = await c.read();
    expect(drained.status, drained.body.toString()).to.equal(200);
    expect(drained.json()).to.deep.equal({ draining: true });
    expect((await call(`${node.mgmt}/health`)).json()).to.include({ draining: true });
  });
});
