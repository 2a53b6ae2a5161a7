// The answers of the data path's calls (Set, Remove, Forward, Get) as the receiver builds them,
// each call's size capped first (call-caps.ts), the same for a unary call and an Exchange frame: generated messages with every field a real field,
// so that any serializer (binary, JSON) writes all of them. On binary Exchange streams the
// compiled encoder (binary-encoder.ts) writes them without protobuf-es's reflection.
import { create } from "@bufbuild/protobuf";
import { anyAbstains, type PeerEndpoint } from "../transport/index.js";
import {
  ForwardResponseSchema,
  RemoveResponseSchema,
  SetResponseSchema,
  type ForwardRequest,
  type ForwardResponse,
  type GetResponse,
  type RemoveRequest,
  type RemoveResponse,
  type SetRequest,
  type SetResponse,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromConsistency, fromWireWrites, toGetResponse, toWirePushAnswer, toWireResult } from "./convert.js";
import { applyRemoveRequest, applySetRequest, toWireTouchAnswer } from "./set-request.js";
import { capItems } from "./call-caps.js";

export function answerSet(endpoint: PeerEndpoint, req: SetRequest): SetResponse {
  capItems("Set", "entries", req.entries.length + req.touches.length);
  const answer = applySetRequest(endpoint, req);
  const abstains = anyAbstains(answer.outcomes) || anyAbstains(answer.touches);
  return create(SetResponseSchema, { ...toWirePushAnswer(answer.outcomes, endpoint.health().node), ...toWireTouchAnswer(answer.touches), abstains });
}

export function answerRemove(endpoint: PeerEndpoint, req: RemoveRequest): RemoveResponse {
  capItems("Remove", "deletions", req.deletions.length);
  const outcomes = applyRemoveRequest(endpoint, req);
  return create(RemoveResponseSchema, { ...toWirePushAnswer(outcomes, endpoint.health().node), abstains: anyAbstains(outcomes) });
}

/** A Get's answer, its keys capped. */
export function answerGet(endpoint: PeerEndpoint, keys: readonly string[]): GetResponse {
  capItems("Get", "keys", keys.length);
  return toGetResponse(endpoint.health().node, keys as string[], endpoint.getRecords(keys as string[]));
}

export async function answerForward(endpoint: PeerEndpoint, req: ForwardRequest): Promise<ForwardResponse> {
  capItems("Forward", "writes", req.writes.length);
  const writes = fromWireWrites(req.writes);
  const results = await endpoint.forward({ from: req.from, consistency: fromConsistency(req.consistency), writes, senderApplies: req.senderApplies, sentAtMs: Number(req.sentAtUnixMs) });
  const node = endpoint.health().node;
  return create(ForwardResponseSchema, { results: results.map((r) => toWireResult(r, node)) });
}
