// What every HTTP/2 stream on the dist listener must get, whatever it sent: an answer or the
// stream's end in time (never a hang), never a failed or closed session, never an internal error
// (HTTP 500, a Connect or gRPC `internal`/`unknown`, an Exchange answer with code INTERNAL), a
// streaming answer that is whole (complete envelopes ending with the end-of-stream one), and a
// session that still serves the next well-formed stream. Pure, so it is unit-tested on hand-made
// answers.
import { fromBinary } from "@bufbuild/protobuf";
import { ExchangeResponseSchema } from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import type { StreamCase } from "./fuzz-case.js";
import type { StreamAnswer, StreamExchange } from "./h2-stream.js";
import { envelopesOf, GRPC_WEB_TRAILER, trailerFields } from "../helpers/grpc-web.js";

/** Statuses the dist listener may answer a stream with (Connect's mapping of its error codes included). */
const STATUSES = [200, 400, 401, 403, 404, 408, 409, 412, 413, 415, 417, 429, 499, 501, 503, 504];
/** RST_STREAM PROTOCOL_ERROR: how nghttp2 refuses a header block HTTP/2 does not allow (an authority with a space). */
const PROTOCOL_ERROR = 1;
/** Connect and gRPC codes that mean the server failed, not the caller. */
const SERVER_FAULT_CODES = new Set(["internal", "unknown", "data_loss"]);
/** gRPC status numbers of the same: UNKNOWN, INTERNAL, DATA_LOSS. */
const GRPC_SERVER_FAULTS = new Set(["2", "13", "15"]);
const END_STREAM = 2;
/**
 * The one `internal` the protocols prescribe for a caller's mistake: a compressed envelope on a
 * stream that declared no compression (gRPC's spec says the receiver fails it with INTERNAL, and
 * Connect's handler, which serves the streams with a deadline, does so).
 */
const PRESCRIBED_INTERNAL = /^received compressed envelope, but do not know how to decompress$/;

function connectStreamProblems(a: StreamAnswer, proto: boolean): string[] {
  const { envelopes, problem } = envelopesOf(a.body);
  if (problem) return [problem];
  const last = envelopes[envelopes.length - 1];
  if (!last || (last.flags & END_STREAM) === 0) return ["a streaming answer without its end-of-stream envelope"];
  const problems: string[] = [];
  let end: { error?: { code?: unknown; message?: unknown } };
  try {
    end = JSON.parse(Buffer.from(last.data).toString("utf8")) as typeof end;
  } catch {
    return ["an end-of-stream envelope that is not JSON"];
  }
  const code = end.error?.code;
  if (typeof code === "string" && SERVER_FAULT_CODES.has(code) && !(code === "internal" && PRESCRIBED_INTERNAL.test(String(end.error?.message)))) problems.push(`end-of-stream error ${code}: ${String(end.error?.message).slice(0, 200)}`);
  for (const e of envelopes.slice(0, -1)) {
    if (e.flags & END_STREAM) problems.push("an envelope after the end-of-stream envelope");
    else if (proto) {
      try {
        const r = fromBinary(ExchangeResponseSchema, e.data);
        if (r.result.case === "error" && r.result.value.code === "INTERNAL") problems.push(`an Exchange answer with code INTERNAL: ${r.result.value.message.slice(0, 200)}`);
      } catch (err) {
        problems.push(`an answer envelope that is not an ExchangeResponse: ${(err as Error).message}`);
      }
    }
  }
  return problems;
}

/** grpc-status and grpc-message of a gRPC-Web answer: its trailer frame (flags 0x80), or its headers for a trailers-only answer. */
function grpcWebStatus(a: StreamAnswer): { status?: string; message: string; problem?: string } {
  const { envelopes, problem } = envelopesOf(a.body);
  if (problem) return { message: "", problem };
  const trailer = envelopes.find((e) => e.flags & GRPC_WEB_TRAILER);
  if (!trailer) return { ...(a.headers["grpc-status"] !== undefined ? { status: a.headers["grpc-status"] } : {}), message: a.headers["grpc-message"] ?? "" };
  const fields = trailerFields(trailer.data);
  return { ...(fields.has("grpc-status") ? { status: fields.get("grpc-status") } : {}), message: fields.get("grpc-message") ?? "" };
}

function answerProblems(a: StreamAnswer): string[] {
  if (a.status === 500) return [`500 Internal Server Error: ${JSON.stringify(a.body.toString("latin1").slice(0, 200))}`];
  if (!STATUSES.includes(a.status)) return [`dist listener answered ${a.status}`];
  const type = (a.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/grpc")) {
    const web = type.startsWith("application/grpc-web") ? grpcWebStatus(a) : undefined;
    if (web?.problem) return [web.problem];
    const grpcStatus = web ? web.status : a.trailers["grpc-status"] ?? a.headers["grpc-status"];
    if (grpcStatus === undefined) return ["a gRPC answer without grpc-status"];
    const message = decodeURIComponent(web ? web.message : a.trailers["grpc-message"] ?? a.headers["grpc-message"] ?? "");
    const prescribed = grpcStatus === "13" && PRESCRIBED_INTERNAL.test(message);
    return GRPC_SERVER_FAULTS.has(grpcStatus) && !prescribed ? [`grpc-status ${grpcStatus}: ${message.slice(0, 200)}`] : [];
  }
  if (a.status === 200 && type.startsWith("application/connect+")) return connectStreamProblems(a, type.startsWith("application/connect+proto"));
  if (type.startsWith("application/json") && a.status >= 400) {
    try {
      const code = (JSON.parse(a.body.toString("utf8")) as { code?: unknown }).code;
      if (typeof code === "string" && SERVER_FAULT_CODES.has(code)) return [`error ${a.status} with code ${code}`];
    } catch {
      return [`error ${a.status} body is not JSON`];
    }
  }
  return [];
}

/** The problems with one stream exchange; empty when it is acceptable. */
export function judgeStream(c: StreamCase, x: StreamExchange): string[] {
  if (x.timedOut) return [`no answer and no end of the stream within ${Math.round(x.elapsedMs)} ms (hang)`];
  const problems: string[] = [];
  if (x.sessionError !== undefined) problems.push(`the session failed: ${x.sessionError}`);
  if (x.goaway !== undefined) problems.push(`the server sent GOAWAY (code ${x.goaway})`);
  if (x.followUp !== undefined) problems.push(`the session did not serve a well-formed stream afterwards: ${x.followUp}`);
  // a caller that reset its stream gets no answer it could read; its session must survive
  if (c.finish !== "end") return problems;
  const malformedHead = c.mutations.some((m) => m.startsWith("authority:"));
  if (x.resetCode !== undefined && !(malformedHead && x.resetCode === PROTOCOL_ERROR)) problems.push(`the server reset the stream (code ${x.resetCode})`);
  else if (!x.answer && x.resetCode === undefined) problems.push("the stream closed without an answer");
  if (x.answer) problems.push(...answerProblems(x.answer));
  return problems;
}
