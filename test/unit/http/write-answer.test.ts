// The PUT and DELETE answer bodies written as text: byte for byte what JSON.stringify writes for
// the generated response types, whatever the key holds.
import { expect } from "chai";
import type { components } from "../../../gen/openapi/client.js";
import { writeAnswerJson } from "../../../src/http/write-answer.js";
import type { Owners } from "../../../src/ring/index.js";

type Schemas = components["schemas"];

function ownersOf(ids: string[]): Owners {
  return { ids, primary: ids[0] ?? "", header: ids.join(","), json: JSON.stringify(ids) };
}

const KEYS = ["k", "bench-1234", 'quote"and\\backslash', "tab\tnew\nline\u0000nul\u001f", "ünï©ødé/日本語", "emoji 🎉", "lone \ud800 surrogate", "\udfff", "</script>", " "];
const OWNER_LISTS = [["n1"], ["node-a", "node-b", "node-c"], ['odd"id', "x\\y"]];

describe("http/write-answer writeAnswerJson", () => {
  for (const ids of OWNER_LISTS) {
    it(`writes what JSON.stringify writes for PutResponse and DeleteResponse (owners ${JSON.stringify(ids)})`, () => {
      const owners = ownersOf(ids);
      for (const key of KEYS) {
        for (const [applied, bytes] of [[true, 100], [false, 0], [true, 1_048_576]] as const) {
          const node = ids[0] as string;
          const put: Schemas["PutResponse"] = { key, stored: applied, bytes, node, owners: ids };
          const del: Schemas["DeleteResponse"] = { key, deleted: applied, bytes, node, owners: ids };
          expect(writeAnswerJson(key, "stored", applied, bytes, JSON.stringify(node), owners)).to.equal(JSON.stringify(put));
          expect(writeAnswerJson(key, "deleted", applied, bytes, JSON.stringify(node), owners)).to.equal(JSON.stringify(del));
        }
      }
    });
  }
});
