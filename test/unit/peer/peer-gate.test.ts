// The dist listener's door (pure part): which requests pass, and why the others are refused.
import { expect } from "chai";
import { isLoopback, peerRequestRefusal, type PeerGateOptions } from "../../../src/peer/peer-gate.js";

const open: PeerGateOptions = { token: undefined, mutualTls: false, insecure: false };
const withToken: PeerGateOptions = { ...open, token: "s3cret" };

describe("peer/peer-gate", () => {
  it("recognises loopback callers: 127.0.0.0/8, ::1 and their IPv4-mapped forms, nothing else", () => {
    for (const a of ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(a), a).to.equal(true);
    for (const a of ["198.18.0.2", "10.0.0.1", "::ffff:10.0.0.1", "0.0.0.0", "::", "fe80::1", "128.0.0.1", undefined]) expect(isLoopback(a), String(a)).to.equal(false);
  });

  it("with a peer token: the right token passes from anywhere, a missing or wrong one is refused even from loopback", () => {
    expect(peerRequestRefusal(withToken, "198.18.0.2", "Bearer s3cret")).to.equal(undefined);
    expect(peerRequestRefusal(withToken, "127.0.0.1", "Bearer wrong")).to.equal("missing or wrong peer token");
    expect(peerRequestRefusal(withToken, "127.0.0.1", undefined)).to.equal("missing or wrong peer token");
    expect(peerRequestRefusal(withToken, "127.0.0.1", "Basic czNjcmV0")).to.equal("missing or wrong peer token");
  });

  it("protected mode (no token, no peer mTLS): loopback callers pass, others are refused with a reason naming the fix", () => {
    expect(peerRequestRefusal(open, "127.0.0.1", undefined)).to.equal(undefined);
    expect(peerRequestRefusal(open, "::1", undefined)).to.equal(undefined);
    const why = peerRequestRefusal(open, "198.18.0.2", undefined);
    expect(why).to.match(/^protected mode/).and.include("198.18.0.2").and.include("SERVICE_PEER_INSECURE=true").and.include("SERVICE_PEER_TOKEN");
  });

  it("SERVICE_PEER_INSECURE or peer mutual TLS lifts protected mode", () => {
    expect(peerRequestRefusal({ ...open, insecure: true }, "198.18.0.2", undefined)).to.equal(undefined);
    expect(peerRequestRefusal({ ...open, mutualTls: true }, "198.18.0.2", undefined)).to.equal(undefined);
  });
});
