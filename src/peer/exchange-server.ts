// The receiving side of Exchange: every request frame is answered as soon as its call completes
// (answers may overtake each other), errors travel as ExchangeError frames, and the stream ends
// once the caller has closed its side and every call has been answered.
import { create } from "@bufbuild/protobuf";
import { AsyncQueue } from "../core/async-queue.js";
import { badRequest, toCacheError } from "../core/errors.js";
import type { ClientWrite, PeerEndpoint } from "../transport/index.js";
import {
  ExchangeErrorSchema,
  ExchangeResponseSchema,
  ForwardResponseSchema,
  GetResponseSchema,
  GetResultSchema,
  RemoveResponseSchema,
  SetResponseSchema,
  type ExchangeRequest,
  type ExchangeResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromConsistency, fromDeletion, fromEntry, fromWireWrite, toEntry, toWireOutcome, toWireResult } from "./convert.js";

async function answer(endpoint: PeerEndpoint, req: ExchangeRequest): Promise<ExchangeResponse> {
  const id = req.id;
  try {
    const call = req.call;
    switch (call.case) {
      case "set": {
        const outcomes = endpoint.applySet(call.value.from, call.value.entries.map((e) => fromEntry({ ...e, tombstone: false })));
        return create(ExchangeResponseSchema, { id, result: { case: "set", value: create(SetResponseSchema, { outcomes: outcomes.map(toWireOutcome) }) } });
      }
      case "remove": {
        const outcomes = endpoint.applyRemove(call.value.from, call.value.deletions.map(fromDeletion));
        return create(ExchangeResponseSchema, { id, result: { case: "remove", value: create(RemoveResponseSchema, { outcomes: outcomes.map(toWireOutcome) }) } });
      }
      case "get": {
        const records = endpoint.getRecords(call.value.keys);
        const results = records.map((rec, i) => {
          const key = call.value.keys[i] as string;
          return create(GetResultSchema, rec ? { key, found: true, entry: toEntry(rec) } : { key, found: false });
        });
        return create(ExchangeResponseSchema, { id, result: { case: "get", value: create(GetResponseSchema, { node: endpoint.health().node, results }) } });
      }
      case "forward": {
        const writes = call.value.writes.map((w, i) => {
          const cw = fromWireWrite(w);
          if (!cw) throw badRequest(`write ${i} has no kind (set or remove)`);
          return cw;
        }) as ClientWrite[];
        const results = await endpoint.forward({ from: call.value.from, consistency: fromConsistency(call.value.consistency), writes, senderApplies: call.value.senderApplies });
        const node = endpoint.health().node;
        return create(ExchangeResponseSchema, { id, result: { case: "forward", value: create(ForwardResponseSchema, { results: results.map((r) => toWireResult(r, node)) }) } });
      }
      default:
        throw badRequest("exchange frame carries no call");
    }
  } catch (err) {
    const e = toCacheError(err);
    const message = e.code === "INTERNAL" ? "internal error" : e.message;
    return create(ExchangeResponseSchema, { id, result: { case: "error", value: create(ExchangeErrorSchema, { code: e.code, message }) } });
  }
}

/** The Exchange handler: answers frames concurrently, in completion order. */
export function exchangeHandler(endpoint: PeerEndpoint) {
  return async function* exchange(requests: AsyncIterable<ExchangeRequest>): AsyncIterable<ExchangeResponse> {
    const out = new AsyncQueue<ExchangeResponse>();
    let open = 0;
    let ended = false;
    const settle = () => {
      if (ended && open === 0) out.close();
    };
    void (async () => {
      try {
        for await (const req of requests) {
          open++;
          void answer(endpoint, req).then((r) => {
            out.push(r);
            open--;
            settle();
          });
        }
        ended = true;
        settle();
      } catch (err) {
        out.fail(err);
      }
    })();
    yield* out;
  };
}
