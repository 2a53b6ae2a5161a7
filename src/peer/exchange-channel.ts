// The calling side of Exchange for one peer: one long-lived bidirectional stream on the peer's
// HTTP/2 session, calls multiplexed by id. Each call has its own timeout; when the stream fails
// or ends, every call pending on it fails (as a unary call would) and the next call opens a new
// stream. A peer that answers Unimplemented is remembered, so callers fall back to unary calls.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AsyncQueue } from "../core/async-queue.js";
import type { TimerHandle, Timers } from "../core/clock.js";
import { CacheError, isErrorCode } from "../core/errors.js";
import {
  ExchangeRequestSchema,
  type ExchangeRequest,
  type ExchangeResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { typedFrames, type FrameCodec } from "./exchange-codec.js";
import { fromConnectError, isRefusedStream } from "./errors.js";
import { notDelivered } from "../transport/index.js";

type Call = ExchangeRequest["call"];

/** How the channel opens a stream, and what its frames are (exchange-codec.ts). */
export interface ExchangeWire<WireOut, WireIn> {
  /** Opens a stream to the peer: the frames to send in, the frames answered out. */
  readonly open: (requests: AsyncIterable<WireOut>) => AsyncIterable<WireIn>;
  readonly frames: FrameCodec<WireIn, ExchangeResponse, ExchangeRequest, WireOut>;
}

/** A wire carrying the generated messages as they are. */
export function typedWire(open: (requests: AsyncIterable<ExchangeRequest>) => AsyncIterable<ExchangeResponse>): ExchangeWire<ExchangeRequest, ExchangeResponse> {
  return { open, frames: typedFrames() };
}

interface Pending<WireOut> {
  readonly resolve: (r: ExchangeResponse) => void;
  readonly reject: (e: unknown) => void;
  readonly timer: TimerHandle;
  /** The stream the call was sent on: only its failure fails the call. */
  stream: AsyncQueue<WireOut>;
  /**
   * The call's frame, kept until its stream has answered anything (a stream that answered was
   * accepted by the peer): a stream refused unprocessed has its calls sent again, once.
   */
  frame: WireOut | undefined;
}

export class ExchangeChannel<WireOut = ExchangeRequest, WireIn = ExchangeResponse> {
  private requests: AsyncQueue<WireOut> | undefined;
  private readonly pending = new Map<number, Pending<WireOut>>();
  /** Streams that have answered anything (accepted by the peer). */
  private readonly accepted = new WeakSet<AsyncQueue<WireOut>>();
  private nextId = 1;
  /** False once the peer answered Unimplemented: use unary calls instead. */
  supported = true;

  constructor(
    private readonly wire: ExchangeWire<WireOut, WireIn>,
    private readonly timers: Timers,
    private readonly timeoutMs: number,
    /**
     * Called when a call times out, with the `activity()` reading taken when it was sent: the
     * owner resets the connection only if nothing came back on it since (a slow call on a stream
     * that still answers others, a forward waiting for its quorum, fails alone).
     */
    private readonly onStall: (activityAtSend: number) => void = () => undefined,
    /** A counter of what the connection under the stream has delivered (its session's reads). */
    private readonly activity: () => number = () => 0,
  ) {}

  /** Sends one call and resolves with its answer frame (an error frame becomes a CacheError). */
  call(call: Call): Promise<ExchangeResponse> {
    const id = this.nextId++;
    const requests = this.open();
    const activityAtSend = this.activity();
    return new Promise<ExchangeResponse>((resolve, reject) => {
      const timer = this.timers.after(this.timeoutMs, () => {
        if (!this.pending.delete(id)) return;
        reject(new CacheError("UNAVAILABLE", `peer call timed out after ${this.timeoutMs} ms`));
        this.onStall(activityAtSend);
      });
      const frame = this.wire.frames.encode(create(ExchangeRequestSchema, { id: BigInt(id), call }));
      this.pending.set(id, {
        resolve: (r) => {
          if (r.result.case === "error") {
            const code = r.result.value.code;
            reject(new CacheError(isErrorCode(code) ? code : "INTERNAL", r.result.value.message));
          } else {
            resolve(r);
          }
        },
        reject,
        timer,
        stream: requests,
        frame: this.accepted.has(requests) ? undefined : frame,
      });
      requests.push(frame);
    });
  }

  /**
   * Moves to a new stream without failing a call: the next call opens one, and the current stream
   * is ended from this side, so the peer answers what is pending on it and then ends it (the
   * Exchange handler ends a stream once the caller closed its side and every call is answered).
   * For a session that must go (a changed peer CA, a GOAWAY): its last stream then closes by itself.
   */
  rotate(): void {
    const requests = this.requests;
    this.requests = undefined;
    requests?.close();
  }

  /** Ends the stream; pending calls fail. */
  close(): void {
    const requests = this.requests;
    this.requests = undefined;
    requests?.close();
    this.failAll(new CacheError("UNAVAILABLE", "peer channel closed"), undefined);
  }

  private open(): AsyncQueue<WireOut> {
    if (this.requests && !this.requests.isClosed) return this.requests;
    const requests = new AsyncQueue<WireOut>();
    this.requests = requests;
    const responses = this.wire.open(requests);
    void this.read(responses, requests);
    return requests;
  }

  private async read(responses: AsyncIterable<WireIn>, requests: AsyncQueue<WireOut>): Promise<void> {
    let failure: unknown = new CacheError("UNAVAILABLE", "peer ended the exchange stream");
    let refused = false;
    let answered = false;
    try {
      for await (const frame of responses) {
        if (!answered) {
          answered = true;
          this.acceptedBy(requests);
        }
        // An answer that does not decode fails the stream (and every call pending on it).
        const r = this.wire.frames.decode(frame);
        const id = Number(r.id);
        const p = this.pending.get(id);
        if (!p) continue;
        this.pending.delete(id);
        p.timer.cancel();
        p.resolve(r);
      }
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unimplemented) this.supported = false;
      refused = !answered && isRefusedStream(err);
      // A refused stream was not processed: its calls that are not sent again were never delivered.
      failure = refused ? notDelivered(fromConnectError(err)) : fromConnectError(err);
    }
    if (this.requests === requests) this.requests = undefined;
    requests.close();
    this.accepted.delete(requests);
    if (refused) this.resend(requests);
    this.failAll(failure, requests);
  }

  /** The stream answered: the peer accepted it, so its calls are never sent again. */
  private acceptedBy(stream: AsyncQueue<WireOut>): void {
    this.accepted.add(stream);
    for (const p of this.pending.values()) if (p.stream === stream) p.frame = undefined;
  }

  /** The calls of a stream the peer refused unprocessed, sent again on a new stream (once each). */
  private resend(refused: AsyncQueue<WireOut>): void {
    for (const p of this.pending.values()) {
      if (p.stream !== refused || p.frame === undefined) continue;
      const next = this.open();
      p.stream = next;
      next.push(p.frame);
      p.frame = undefined;
    }
  }

  /** Fails the calls pending on `stream` (every pending call when undefined). */
  private failAll(err: unknown, stream: AsyncQueue<WireOut> | undefined): void {
    for (const [id, p] of this.pending) {
      if (stream !== undefined && p.stream !== stream) continue;
      this.pending.delete(id);
      p.timer.cancel();
      p.reject(err);
    }
  }
}
