import { expect } from "chai";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { CONNECTION_RANK, HttpConnectionRanker } from "../../../src/http/connection-rank.js";

/** What the ranker reads of a socket. */
interface FakeSocket {
  _httpMessage?: unknown;
  bytesWritten: number;
  writableLength: number;
  _parent?: FakeSocket;
}

const sock = (over: Partial<FakeSocket> = {}): FakeSocket => ({ bytesWritten: 0, writableLength: 0, ...over });
const asSocket = (s: FakeSocket) => s as unknown as Socket;

describe("HttpConnectionRanker", () => {
  let now = 0;
  const ranker = (tls = false) => new HttpConnectionRanker(tls, 5_000, () => now);
  beforeEach(() => (now = 1_000));

  it("ranks a silent connection above a keep-alive one between requests, and an answer in flight as busy", () => {
    const r = ranker();
    expect(r.rank(asSocket(sock()))).to.equal(CONNECTION_RANK.neverServed);
    expect(r.rank(asSocket(sock({ bytesWritten: 300 })))).to.equal(CONNECTION_RANK.servedIdle);
    expect(r.rank(asSocket(sock({ _httpMessage: {}, bytesWritten: 300 })))).to.equal(CONNECTION_RANK.busy);
  });

  it("ranks an answer whose bytes have not moved for stalledAfterMs highest, and a moving one busy", () => {
    const r = ranker();
    const stuck = sock({ _httpMessage: {}, bytesWritten: 9_000_000, writableLength: 8_000_000 });
    const moving = sock({ _httpMessage: {}, bytesWritten: 9_000_000, writableLength: 8_000_000 });
    expect(r.rank(asSocket(stuck)), "first look: not known to be stuck").to.equal(CONNECTION_RANK.busy);
    expect(r.rank(asSocket(moving))).to.equal(CONNECTION_RANK.busy);
    now += 4_999;
    moving.writableLength -= 65_536;
    expect(r.rank(asSocket(stuck)), "not yet").to.equal(CONNECTION_RANK.busy);
    expect(r.rank(asSocket(moving))).to.equal(CONNECTION_RANK.busy);
    now += 1;
    expect(r.rank(asSocket(stuck))).to.equal(CONNECTION_RANK.stalled);
    now += 5_000;
    moving.writableLength -= 65_536;
    expect(r.rank(asSocket(moving)), "its bytes moved since the last look").to.equal(CONNECTION_RANK.busy);
    // an answer with nothing queued is not stalled, however long it takes (a slow handler)
    const waiting = sock({ _httpMessage: {}, bytesWritten: 0, writableLength: 0 });
    r.rank(asSocket(waiting));
    now += 60_000;
    expect(r.rank(asSocket(waiting))).to.equal(CONNECTION_RANK.busy);
  });

  it("on HTTPS, ranks a connection still in its TLS handshake as never served, then reads its TLS socket", () => {
    const r = ranker(true);
    const accepted = sock({ bytesWritten: 1_200 }); // the handshake's bytes
    expect(r.rank(asSocket(accepted))).to.equal(CONNECTION_RANK.neverServed);
    const tls = sock({ _parent: accepted, _httpMessage: {}, bytesWritten: 10 });
    r.adoptTls(tls as unknown as TLSSocket);
    expect(r.rank(asSocket(accepted))).to.equal(CONNECTION_RANK.busy);
    tls._httpMessage = null;
    expect(r.rank(asSocket(accepted))).to.equal(CONNECTION_RANK.servedIdle);
  });
});
