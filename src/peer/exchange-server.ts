// The receiving side of Exchange: every request frame is answered as soon as its call completes
// (answers may overtake each other), errors travel as ExchangeError frames, and the stream ends
// once the caller has closed its side and every call has been answered.
import { create } from "@bufbuild/protobuf";
import { AsyncQueue } from "../core/async-queue.js";
import { badRequest, toCacheError } from "../core/errors.js";
import { EXCHANGE_LIMITS } from "../core/limits.js";
import type { PeerEndpoint } from "../transport/index.js";
import {
  ExchangeErrorSchema,
  ExchangeResponseSchema,
  type ExchangeRequest,
  type ExchangeResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { answerForward, answerGet, answerRemove, answerSet } from "./write-answers.js";
import { typedFrames, type FrameCodec } from "./exchange-codec.js";
import { asCallerReadError } from "./parse-errors.js";

async function answer(endpoint: PeerEndpoint, req: ExchangeRequest): Promise<ExchangeResponse> {
  const id = req.id;
  try {
    const call = req.call;
    switch (call.case) {
      case "set":
        return create(ExchangeResponseSchema, { id, result: { case: "set", value: answerSet(endpoint, call.value) } });
      case "remove":
        return create(ExchangeResponseSchema, { id, result: { case: "remove", value: answerRemove(endpoint, call.value) } });
      case "get":
        return create(ExchangeResponseSchema, { id, result: { case: "get", value: answerGet(endpoint, call.value.keys) } });
      case "forward":
        return create(ExchangeResponseSchema, { id, result: { case: "forward", value: await answerForward(endpoint, call.value) } });
      default:
        throw badRequest("exchange frame carries no call");
    }
  } catch (err) {
    const e = toCacheError(err);
    const message = e.code === "INTERNAL" ? "internal error" : e.message;
    return create(ExchangeResponseSchema, { id, result: { case: "error", value: create(ExchangeErrorSchema, { code: e.code, message }) } });
  }
}

/**
 * Calls a stream may have pending or answered-but-unsent at once, and bytes of unsent answers.
 * Past either the handler stops reading frames until the caller takes answers, so a caller that
 * never reads cannot make the node buffer answers without bound (backpressure then reaches it
 * through HTTP/2 flow control).
 */
const EXCHANGE_PENDING_MAX = EXCHANGE_LIMITS.pendingFramesMax;
const EXCHANGE_UNSENT_BYTES_MAX = EXCHANGE_LIMITS.unsentBytesMax;

/** Approximate wire size of an answer (the records of a Get answer dominate). */
function answerBytes(r: ExchangeResponse): number {
  if (r.result.case === "get") {
    let n = 64;
    for (const g of r.result.value.results) n += 32 + g.key.length * 3 + (g.entry?.value.length ?? 0);
    return n;
  }
  return 256;
}

/**
 * The Exchange handler: answers frames concurrently, in completion order, with backpressure.
 * `frames` turns the stream's frames into requests and answers into frames (exchange-codec.ts);
 * without it the stream carries the generated messages themselves.
 */
export function exchangeHandler(endpoint: PeerEndpoint): (requests: AsyncIterable<ExchangeRequest>) => AsyncIterable<ExchangeResponse>;
export function exchangeHandler<WireIn, WireOut>(endpoint: PeerEndpoint, frames: FrameCodec<WireIn, ExchangeRequest, ExchangeResponse, WireOut>): (requests: AsyncIterable<WireIn>) => AsyncIterable<WireOut>;
export function exchangeHandler<WireIn, WireOut>(
  endpoint: PeerEndpoint,
  frames: FrameCodec<WireIn, ExchangeRequest, ExchangeResponse, WireOut> = typedFrames() as unknown as FrameCodec<WireIn, ExchangeRequest, ExchangeResponse, WireOut>,
) {
  return async function* exchange(requests: AsyncIterable<WireIn>): AsyncIterable<WireOut> {
    const out = new AsyncQueue<{ response: ExchangeResponse; bytes: number }>();
    let open = 0;
    let unsentBytes = 0;
    let ended = false;
    let wake: (() => void) | undefined;
    const poke = () => {
      wake?.();
      wake = undefined;
    };
    const busy = () => open + out.size >= EXCHANGE_PENDING_MAX || unsentBytes >= EXCHANGE_UNSENT_BYTES_MAX;
    void (async () => {
      try {
        for await (const req of requests) {
          while (busy() && !out.isClosed) await new Promise<void>((r) => (wake = r));
          // A frame that does not decode ends the stream with the error (after the answers due).
          const request = frames.decode(req);
          open++;
          void answer(endpoint, request).then((response) => {
            const bytes = answerBytes(response);
            unsentBytes += bytes;
            out.push({ response, bytes });
            open--;
            if (ended && open === 0) out.close();
          });
        }
        ended = true;
        if (open === 0) out.close();
      } catch (err) {
        out.fail(asCallerReadError(err));
      }
    })();
    for await (const { response, bytes } of out) {
      unsentBytes -= bytes;
      poke();
      yield frames.encode(response);
    }
  };
}
