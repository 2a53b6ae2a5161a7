// Peer calls that carry more than a node ever sends in one call are refused (INVALID_ARGUMENT,
// our BAD_REQUEST) before anything of them is applied: a review's stall hunt sent Set, Forward,
// Remove, Get, HandOffHints, Gossip and MerkleRange calls of hundreds of thousands of items, each
// applied and answered in one piece (0.2 to 4 s of a stalled event loop).
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";
import { PEER_CALL_ITEMS_MAX, PEER_GOSSIP_MEMBERS_MAX, PEER_MERKLE_LEAVES_MAX } from "../../../src/peer/call-caps.js";
import { toDeletion, toEntry } from "../../../src/peer/convert.js";
import { exchangeHandler } from "../../../src/peer/exchange-server.js";
import { peerServiceImpl } from "../../../src/peer/peer-service.js";
import { INSPECT_KEYS_MAX } from "../../../src/core/limits.js";
import type { PeerEndpoint } from "../../../src/transport/index.js";
import {
  ClientWriteSchema,
  ExchangeRequestSchema,
  ForwardRequestSchema,
  GetRequestSchema,
  GossipRequestSchema,
  HandOffHintsRequestSchema,
  InspectRequestSchema,
  MemberSchema,
  MerkleRangeRequestSchema,
  RemoveRequestSchema,
  SetRequestSchema,
  type ExchangeResponse,
} from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";

const record = (i: number) => ({ key: `k${i}`, value: "v", version: 5, origin: "n2", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** An endpoint whose every method records that it was called. */
function endpoint(): { e: PeerEndpoint; calls: string[] } {
  const calls: string[] = [];
  const e = new Proxy({} as PeerEndpoint, {
    get: (_t, name: string) => (name === "health" ? () => ({ node: "n3", draining: false, incarnation: 1 }) : (...args: unknown[]) => (calls.push(name), args && [])),
  });
  return { e, calls };
}

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call;
    return "ok";
  } catch (err) {
    return (err as ConnectError).code;
  }
}

describe("peer/call-caps: oversized peer calls are refused before they are applied", () => {
  it("unary calls one past their cap: INVALID_ARGUMENT, the endpoint never called", async () => {
    const { e, calls } = endpoint();
    const s = peerServiceImpl(e) as unknown as Record<string, (req: unknown) => Promise<unknown>>;
    const over = PEER_CALL_ITEMS_MAX + 1;
    const cases: Array<[string, unknown]> = [
      ["set", create(SetRequestSchema, { from: "n2", entries: times(over, (i) => toEntry(record(i))) })],
      ["remove", create(RemoveRequestSchema, { from: "n2", deletions: times(over, (i) => toDeletion({ ...record(i), value: "", tombstone: true })) })],
      ["forward", create(ForwardRequestSchema, { from: "n2", writes: times(over, (i) => create(ClientWriteSchema, { key: `k${i}` })) })],
      ["get", create(GetRequestSchema, { keys: times(over, (i) => `k${i}`) })],
      ["inspect", create(InspectRequestSchema, { keys: times(INSPECT_KEYS_MAX + 1, (i) => `k${i}`) })],
      ["handOffHints", create(HandOffHintsRequestSchema, { from: "n2", target: "n4", targetAddress: "127.0.0.1:1", entries: times(over, (i) => toEntry(record(i))) })],
      ["gossip", create(GossipRequestSchema, { from: "n2", members: times(PEER_GOSSIP_MEMBERS_MAX + 1, (i) => create(MemberSchema, { id: `m${i}`, address: "127.0.0.1:1" })) })],
      ["merkleRange", create(MerkleRangeRequestSchema, { requester: "n2", leafCount: 65_536, leaves: times(PEER_MERKLE_LEAVES_MAX + 1, (i) => i) })],
    ];
    for (const [method, req] of cases) expect(await codeOf((s[method] as (r: unknown) => Promise<unknown>)(req)), method).to.equal(Code.InvalidArgument);
    expect(calls).to.deep.equal([]);
  });

  it("at the cap a Set is applied", async () => {
    const { e, calls } = endpoint();
    const s = peerServiceImpl(e) as unknown as Record<string, (req: unknown) => Promise<unknown>>;
    expect(await codeOf((s.set as (r: unknown) => Promise<unknown>)(create(SetRequestSchema, { from: "n2", entries: times(PEER_CALL_ITEMS_MAX, (i) => toEntry(record(i))) })))).to.equal("ok");
    expect(calls).to.include("applySet");
  });

  it("an Exchange frame of a Get one past the cap is answered with BAD_REQUEST, and the stream goes on", async () => {
    const { e, calls } = endpoint();
    const frames = [
      create(ExchangeRequestSchema, { id: 1n, call: { case: "get", value: create(GetRequestSchema, { keys: times(PEER_CALL_ITEMS_MAX + 1, (i) => `k${i}`) }) } }),
      create(ExchangeRequestSchema, { id: 2n, call: { case: "get", value: create(GetRequestSchema, { keys: ["a"] }) } }),
    ];
    async function* requests() {
      yield* frames;
    }
    const answers: ExchangeResponse[] = [];
    for await (const a of exchangeHandler(e)(requests())) answers.push(a);
    const byId = new Map(answers.map((a) => [a.id, a]));
    expect(byId.get(1n)?.result.case).to.equal("error");
    expect(byId.get(1n)?.result.value).to.include({ code: "BAD_REQUEST" });
    expect(byId.get(2n)?.result.case).to.equal("get");
    expect(calls.filter((c) => c === "getRecords")).to.have.length(1);
  });
});
