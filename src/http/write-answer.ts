// The JSON bodies of PUT and DELETE answers on the item routes, written as text: the same bytes
// JSON.stringify writes for Schemas["PutResponse"] and Schemas["DeleteResponse"] (the unit test
// compares the two), at a third of its cost, with the owners' JSON the ring keeps per owner list.
import type { Owners } from "../ring/index.js";

/** `{"key":…,"stored"|"deleted":…,"bytes":…,"node":…,"owners":[…]}`; `nodeJson` is the node id as JSON. */
export function writeAnswerJson(key: string, verb: "stored" | "deleted", applied: boolean, bytes: number, nodeJson: string, owners: Owners): string {
  return `{"key":${JSON.stringify(key)},"${verb}":${applied},"bytes":${bytes},"node":${nodeJson},"owners":${owners.json}}`;
}
