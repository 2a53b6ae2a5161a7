// peer/set-request.ts: touches in a SetRequest survive the wire, a request with entries and
// touches (or touches with the entries' owner-check fields) is a 400, and a touch answer that
// does not carry one known outcome per touch (an older receiver ignores touches) reads as
// base-missing, so the sender pushes the full item instead of counting an acknowledgement.
import { expect } from "chai";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CacheError } from "../../../src/core/errors.js";
import { PEER_BATCHING } from "../../../src/core/limits.js";
import { applySetRequest, fromWireTouchAnswer, toWireTouch, toWireTouchAnswer } from "../../../src/peer/set-request.js";
import { toDeletion, toEntry } from "../../../src/peer/convert.js";
import { exchangeHandler } from "../../../src/peer/exchange-server.js";
import type { PeerEndpoint, TouchOutcome, TouchPush } from "../../../src/transport/index.js";
import { peerServiceImpl } from "../../../src/peer/peer-service.js";
import {
  ApplyOutcome as WireOutcome,
  ExchangeRequestSchema,
  OwnerListSchema,
  RemoveRequestSchema,
  SetRequestSchema,
  SetResponseSchema,
  type ExchangeRequest,
  type ExchangeResponse,
  type RemoveRequest,
  type SetRequest,
  type SetResponse,
} from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";

const touch: TouchPush = { key: "k/ü", baseVersion: 2 ** 52 + 1, baseOrigin: "n2", version: 2 ** 53 - 2, origin: "n2", expiresAtMs: 1_900_000_000_000, lastUpdatedMs: 1_800_000_000_000, owners: ["n2", "n1", "n3"] };
const peer = { id: "n3", address: "127.0.0.1:1" };

/** An endpoint that records what applySet and applyTouches got; touch i is answered answers[i % n] (base-missing by default). */
function endpoint(answers: readonly TouchOutcome[] = [{ kind: "base-missing", version: 0, origin: "" }]) {
  const got: { sets: unknown[]; touches: TouchPush[][] } = { sets: [], touches: [] };
  const e = {
    applySet: (_from: string, records: unknown[]) => {
      got.sets.push(records);
      return [];
    },
    applyTouches: (_from: string, touches: readonly TouchPush[]) => {
      got.touches.push([...touches]);
      return touches.map((_t, i): TouchOutcome => answers[i % answers.length] as TouchOutcome);
    },
  } as unknown as PeerEndpoint;
  return { e, got };
}

describe("peer/set-request (touches pushed without their values)", () => {
  it("a touch survives encoding and decoding a SetRequest unchanged, and is applied as a touch", () => {
    const bytes = toBinary(SetRequestSchema, create(SetRequestSchema, { from: "n2", touches: [toWireTouch(touch)] }));
    const { e, got } = endpoint();
    const answer = applySetRequest(e, fromBinary(SetRequestSchema, bytes));
    expect(got.touches).to.deep.equal([[touch]]);
    expect(got.sets).to.deep.equal([]);
    expect(answer.touches).to.have.length(1);
  });

  it("entries and touches in one request, or touches with expected_owners / owner lists: 400, nothing applied", () => {
    const entry = toEntry({ key: "e", value: "v", version: 5, origin: "n2", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
    const mixed = [
      create(SetRequestSchema, { from: "n2", entries: [entry], touches: [toWireTouch(touch)] }),
      create(SetRequestSchema, { from: "n2", expectedOwners: ["n1"], touches: [toWireTouch(touch)] }),
      create(SetRequestSchema, { from: "n2", entryOwnerLists: [1], touches: [toWireTouch(touch)] }),
      create(SetRequestSchema, { from: "n2", ownerLists: [create(OwnerListSchema, { ids: ["n1"] })], touches: [toWireTouch(touch)] }),
    ];
    for (const req of mixed) {
      const { e, got } = endpoint();
      expect(() => applySetRequest(e, req)).to.throw(CacheError).with.property("code", "BAD_REQUEST");
      expect(got).to.deep.equal({ sets: [], touches: [] });
    }
  });

  it("each outcome comes back with what the receiver holds, in order", () => {
    const outcomes: TouchOutcome[] = [
      { kind: "applied", version: touch.version, origin: "n2" },
      { kind: "stale", version: 2 ** 53 - 1, origin: "n1" },
      { kind: "refused", version: 0, origin: "" },
      { kind: "base-missing", version: 0, origin: "" },
    ];
    const wire = fromBinary(SetResponseSchema, toBinary(SetResponseSchema, create(SetResponseSchema, { node: "n3", ...toWireTouchAnswer(outcomes) })));
    expect(fromWireTouchAnswer(wire, 4, peer)).to.deep.equal(outcomes);
  });

  it("an answer without one outcome per touch (an older node ignores touches) or with an unknown outcome: base-missing for those, never an acknowledgement", () => {
    const older = create(SetResponseSchema, { node: "n3" });
    expect(fromWireTouchAnswer(older, 2, peer).map((o) => o.kind)).to.deep.equal(["base-missing", "base-missing"]);
    const short = create(SetResponseSchema, { node: "n3", touchOutcomes: [WireOutcome.APPLIED] });
    expect(fromWireTouchAnswer(short, 2, peer).map((o) => o.kind)).to.deep.equal(["base-missing", "base-missing"]);
    const unknown = create(SetResponseSchema, { node: "n3", touchOutcomes: [99 as WireOutcome, WireOutcome.UNSPECIFIED] });
    expect(fromWireTouchAnswer(unknown, 2, peer).map((o) => o.kind)).to.deep.equal(["base-missing", "base-missing"]);
  });

  it("the unary Set handler (peers without the Exchange stream) answers touches one by one, and refuses a mixed request as INVALID_ARGUMENT", async () => {
    const { e, got } = endpoint();
    const service = peerServiceImpl({ ...e, health: () => ({ node: "n3", draining: false, incarnation: 1 }) });
    const set = service.set as unknown as (req: SetRequest) => Promise<SetResponse>;
    const answer = await set(create(SetRequestSchema, { from: "n2", touches: [toWireTouch(touch), toWireTouch({ ...touch, key: "b" })] }));
    expect(got.touches.map((ts) => ts.map((t) => t.key))).to.deep.equal([[touch.key, "b"]]);
    expect(fromWireTouchAnswer(answer, 2, peer).map((o) => o.kind)).to.deep.equal(["base-missing", "base-missing"]);
    expect(answer.touchOutcomes).to.deep.equal([WireOutcome.BASE_MISSING, WireOutcome.BASE_MISSING]);
    const entry = toEntry({ key: "e", value: "v", version: 5, origin: "n2", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
    const refused = await set(create(SetRequestSchema, { from: "n2", entries: [entry], touches: [toWireTouch(touch)] })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(ConnectError);
    expect((refused as ConnectError).code).to.equal(Code.InvalidArgument);
  });

  it("the unary Set handler answers each touch's outcome in request order", async () => {
    const outcomes: TouchOutcome[] = [
      { kind: "applied", version: touch.version, origin: "n2" },
      { kind: "stale", version: 2 ** 53 - 1, origin: "n1" },
      { kind: "refused", version: 0, origin: "" },
      { kind: "base-missing", version: 0, origin: "" },
    ];
    const { e } = endpoint(outcomes);
    const service = peerServiceImpl({ ...e, health: () => ({ node: "n3", draining: false, incarnation: 1 }) });
    const set = service.set as unknown as (req: SetRequest) => Promise<SetResponse>;
    const answer = await set(create(SetRequestSchema, { from: "n2", touches: ["a", "b", "c", "d"].map((key) => toWireTouch({ ...touch, key })) }));
    expect(fromWireTouchAnswer(answer, 4, peer)).to.deep.equal(outcomes);
  });

  it("more touches than a push may carry: 400 before any is converted or applied", () => {
    const { e, got } = endpoint();
    const many = create(SetRequestSchema, { from: "n2", touches: Array.from({ length: PEER_BATCHING.push.items + 1 }, (_, i) => toWireTouch({ ...touch, key: `k${i}` })) });
    expect(() => applySetRequest(e, many)).to.throw(CacheError).with.property("code", "BAD_REQUEST");
    expect(got.touches).to.deep.equal([]);
  });

  it("a Set or Remove with malformed owner checks is refused before anything is applied: INVALID_ARGUMENT unary, a BAD_REQUEST error frame on the Exchange stream", async () => {
    const calls: string[] = [];
    const e = {
      applySet: () => (calls.push("applySet"), []),
      applyRemove: () => (calls.push("applyRemove"), []),
      health: () => ({ node: "n3", draining: false, incarnation: 1 }),
    } as unknown as PeerEndpoint;
    const entry = toEntry({ key: "e", value: "v", version: 5, origin: "n2", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: false });
    const deletion = toDeletion({ key: "e", value: "", version: 5, origin: "n2", lastUpdatedMs: 0, expiresAtMs: 0, tombstone: true });
    // Entry 1 names owner list 2 of 1: its check would be skipped if taken.
    const badChecks = { ownerLists: [create(OwnerListSchema, { ids: ["n1", "n2"] })], entryOwnerLists: [2] };
    const set = create(SetRequestSchema, { from: "n2", entries: [entry], ...badChecks });
    const remove = create(RemoveRequestSchema, { from: "n2", deletions: [deletion], ...badChecks });
    const service = peerServiceImpl(e);
    for (const unary of [() => (service.set as unknown as (r: SetRequest) => Promise<unknown>)(set), () => (service.remove as unknown as (r: RemoveRequest) => Promise<unknown>)(remove)]) {
      const err = await unary().then(() => undefined, (x: unknown) => x);
      expect(err).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
    }
    async function* frames(): AsyncIterable<ExchangeRequest> {
      yield create(ExchangeRequestSchema, { id: 1n, call: { case: "set", value: set } });
      yield create(ExchangeRequestSchema, { id: 2n, call: { case: "remove", value: remove } });
    }
    const answers: ExchangeResponse[] = [];
    for await (const r of exchangeHandler(e)(frames())) answers.push(r);
    expect(answers.map((a) => [a.id, a.result.case, a.result.case === "error" ? a.result.value.code : ""]).sort()).to.deep.equal([
      [1n, "error", "BAD_REQUEST"],
      [2n, "error", "BAD_REQUEST"],
    ]);
    expect(calls, "nothing applied").to.deep.equal([]);
  });

  it("an answer from another node than the one addressed is UNAVAILABLE", () => {
    const other = create(SetResponseSchema, { node: "n9", ...toWireTouchAnswer([{ kind: "applied", version: 1, origin: "n2" }]) });
    expect(() => fromWireTouchAnswer(other, 1, peer)).to.throw(CacheError).with.property("code", "UNAVAILABLE");
  });
});
