// Sends one stream case over a fresh HTTP/2 session to the dist listener and reads what comes
// back: the answer (status, headers, body, trailers), a reset of the stream by the server, a
// failure or GOAWAY of the session, or nothing in time (a hang). Then, on the same session, a
// well-formed Exchange stream must still be served: whatever one stream did stays in its stream.
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { drained, envelope, EnvelopeReader } from "../../src/peer/connect-envelopes.js";
import { ExchangeRequestSchema, ExchangeResponseSchema, PeerService } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import type { StreamCase } from "./fuzz-case.js";

export const EXCHANGE_PATH = `/internal/${PeerService.typeName}/${PeerService.method.exchange.name}`;

export interface StreamAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  trailers: Record<string, string>;
}

export interface StreamExchange {
  answer?: StreamAnswer;
  /** The server reset the stream, with this code. */
  resetCode?: number;
  /** The session failed (an error event) with this message. */
  sessionError?: string;
  /** The server sent GOAWAY with this error code (0 is a graceful one). */
  goaway?: number;
  /** Neither an answer nor the stream's end within the time limit. */
  timedOut: boolean;
  /** What went wrong with the well-formed stream sent afterwards on the same session (undefined: served). */
  followUp?: string;
  elapsedMs: number;
}

/** How long the follow-up stream may take. */
const FOLLOW_UP_TIMEOUT_MS = 5_000;
const TIMEOUT = Symbol("timeout");

function flat(h: http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : String(v);
  return out;
}

function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMEOUT>((resolve) => (timer = setTimeout(() => resolve(TIMEOUT), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Opens a stream with `headers`, writes `pieces`, finishes as told, and collects what comes back once the stream closes. */
function runStream(session: http2.ClientHttp2Session, path: string, headers: readonly [string, string][], pieces: readonly Buffer[], finish: StreamCase["finish"]): Promise<Pick<StreamExchange, "answer" | "resetCode">> {
  return new Promise((resolve) => {
    const stream = session.request({ ":method": "POST", ":path": path, ...Object.fromEntries(headers) }, { endStream: false });
    let head: { status: number; headers: Record<string, string> } | undefined;
    let trailers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let resetByUs = false;
    stream.on("response", (h) => (head = { status: Number(h[":status"]), headers: flat(h) }));
    stream.on("trailers", (t) => (trailers = flat(t)));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => undefined);
    stream.on("close", () => {
      const code = stream.rstCode;
      const byServer = !resetByUs && code !== undefined && code !== http2.constants.NGHTTP2_NO_ERROR;
      resolve({ ...(head ? { answer: { ...head, body: Buffer.concat(chunks), trailers } } : {}), ...(byServer ? { resetCode: code } : {}) });
    });
    const stopAt = finish === "reset-early" ? pieces.length >> 1 : pieces.length;
    void (async () => {
      for (let i = 0; i < stopAt; i++) {
        if (stream.destroyed || stream.closed) return;
        if (!stream.write(pieces[i])) await drained(stream);
      }
      if (stream.destroyed || stream.closed) return;
      if (finish === "end") stream.end();
      else {
        resetByUs = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }
    })();
  });
}

/** A well-formed Exchange stream (one get of a key no case writes); undefined when served as it should be. */
async function followUp(session: http2.ClientHttp2Session, headers: readonly [string, string][]): Promise<string | undefined> {
  const frame = toBinary(ExchangeRequestSchema, create(ExchangeRequestSchema, { id: 7n, call: { case: "get", value: { keys: ["fuzz-follow-up"] } } }));
  const got = await within(runStream(session, EXCHANGE_PATH, headers, [envelope(0, frame)], "end"), FOLLOW_UP_TIMEOUT_MS);
  if (got === TIMEOUT) return `no answer within ${FOLLOW_UP_TIMEOUT_MS} ms`;
  if (got.resetCode !== undefined) return `reset with code ${got.resetCode}`;
  if (!got.answer) return "closed without an answer";
  if (got.answer.status !== 200) return `status ${got.answer.status}`;
  const envelopes: { flags: number; data: Uint8Array }[] = [];
  try {
    new EnvelopeReader(1 << 20).push(got.answer.body, (flags, data) => envelopes.push({ flags, data }));
    const answer = fromBinary(ExchangeResponseSchema, envelopes[0]?.data ?? new Uint8Array());
    if (envelopes.length !== 2 || answer.id !== 7n || answer.result.case !== "get") return `unexpected answer ${JSON.stringify(envelopes.map((e) => e.flags))}`;
    if (envelopes[1]?.flags !== 2 || Buffer.from(envelopes[1].data).toString() !== "{}") return "no clean end-of-stream envelope";
  } catch (err) {
    return `unreadable answer: ${(err as Error).message}`;
  }
  return undefined;
}

/**
 * Sends `c` on a fresh session to `port`; `authorization` is the peer token header the follow-up
 * stream carries.
 */
export async function sendStream(port: number, c: StreamCase, authorization: string, timeoutMs: number): Promise<StreamExchange> {
  const t0 = performance.now();
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const out: StreamExchange = { timedOut: false, elapsedMs: 0 };
  session.on("error", (err: Error) => (out.sessionError ??= err.message));
  session.on("goaway", (code: number) => (out.goaway ??= code));
  try {
    const got = await within(runStream(session, c.path, c.headers, c.pieces.map((p) => Buffer.from(p, "base64")), c.finish), timeoutMs);
    if (got === TIMEOUT) {
      out.timedOut = true;
      return out;
    }
    Object.assign(out, got);
    if (out.sessionError === undefined && out.goaway === undefined) {
      // a session the server closed without an error or a GOAWAY cannot serve the next stream
      out.followUp = session.destroyed || session.closed ? "the server closed the session" : await followUp(session, [["content-type", "application/connect+proto"], ["connect-protocol-version", "1"], ["authorization", authorization]]);
    }
    return out;
  } finally {
    session.destroy();
    out.elapsedMs = performance.now() - t0;
  }
}
