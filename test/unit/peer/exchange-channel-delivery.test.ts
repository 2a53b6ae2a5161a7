// How far a failed exchange call got (transport/delivery.ts): a call on a stream the peer refused
// unprocessed is sent again once; refused a second time it fails as never delivered, which lets
// a replica take an increment over. (From a review of 70ae004.)
import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AsyncQueue } from "../../../src/core/async-queue.js";
import { ExchangeChannel, typedWire } from "../../../src/peer/exchange-channel.js";
import { neverDelivered } from "../../../src/transport/index.js";
import { ExchangeResponseSchema, GetRequestSchema, type ExchangeRequest, type ExchangeResponse } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { ManualClock } from "../../helpers/manual-clock.js";

/** Node's own refusal of a stream, as Connect wraps it. */
const refusal = () =>
  new ConnectError("refused", Code.Unavailable, undefined, undefined, Object.assign(new Error("Stream closed with error code NGHTTP2_REFUSED_STREAM"), { code: "ERR_HTTP2_STREAM_ERROR" }));
const get = () => ({ case: "get" as const, value: create(GetRequestSchema, { keys: ["k"] }) });

/** A wire whose streams, in order, refuse their first frame or answer every frame. */
function plannedWire(plan: Array<"refuse" | "answer" | "reset">) {
  let opened = 0;
  const wire = typedWire((requests: AsyncIterable<ExchangeRequest>) => {
    const mode = plan[opened++] ?? "answer";
    const out = new AsyncQueue<ExchangeResponse>();
    void (async () => {
      for await (const r of requests) {
        if (mode === "refuse") return out.fail(refusal());
        if (mode === "reset") return out.fail(new ConnectError("stream reset", Code.Unavailable));
        out.push(create(ExchangeResponseSchema, { id: r.id, result: { case: "get", value: { results: [] } } }));
      }
      out.close();
    })();
    return out;
  });
  return { wire, opened: () => opened };
}

describe("peer/exchange-channel delivery", () => {
  it("a call whose stream is refused twice fails as never delivered; refused once, then answered, it succeeds", async () => {
    const w = plannedWire(["refuse", "refuse", "refuse", "answer"]);
    const ch = new ExchangeChannel(w.wire, new ManualClock(), 2000);
    const first = await ch.call(get()).catch((e: unknown) => e);
    expect(w.opened(), "sent again once").to.equal(2);
    expect(neverDelivered(first), String(first)).to.equal(true);
    const second = await ch.call(get());
    expect(second.result.case).to.equal("get");
    expect(w.opened()).to.equal(4);
    ch.close();
  });

  it("a call on a stream that fails otherwise may have been delivered", async () => {
    const w = plannedWire(["reset"]);
    const ch = new ExchangeChannel(w.wire, new ManualClock(), 2000);
    const failed = await ch.call(get()).catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(Error);
    expect(neverDelivered(failed)).to.equal(false);
    ch.close();
  });
});
