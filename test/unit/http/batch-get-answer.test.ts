import { expect } from "chai";
import { answerBytesEstimate, answerChunks, answerObject, answerStream, VALUE_PIECE_BYTES, type AnswerResult } from "../../../src/http/batch-get-answer.js";

const MIB = 1024 * 1024;

/** A value of `n` bytes covering every byte value (latin1 string, as the store keeps them). */
const valueOf = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) & 0xff)).toString("latin1");

const results = (values: string[]): AnswerResult[] => [
  { key: "missing", status: 404, found: false, owners: ["n1"], node: "n1", error: "key \"missing\" not found", code: "NOT_FOUND" },
  ...values.map((value, i) => ({ key: `k${i}-"é"`, value, rest: { value_encoding: "base64" as const, version: 7, origin: "n1", last_updated: "2026-01-01T00:00:00.000Z", node: "n1", owners: ["n1"], status: 200 as const, found: true } })),
];

describe("http/batch-get-answer", () => {
  it("the streamed chunks are the same JSON as the one-object answer, byte for byte once parsed (values across piece boundaries)", () => {
    for (const sizes of [[0], [1], [2], [3], [VALUE_PIECE_BYTES - 1, VALUE_PIECE_BYTES, VALUE_PIECE_BYTES + 1], [3 * VALUE_PIECE_BYTES + 2]]) {
      const r = results(sizes.map(valueOf));
      const streamed = JSON.parse([...answerChunks(r)].join("")) as unknown;
      expect(streamed, `sizes ${sizes.join(",")}`).to.deep.equal(answerObject(r));
    }
  });

  it("no chunk of a large answer is larger than a piece of base64 plus 64 KiB of small results", () => {
    const chunks = [...answerChunks(results([valueOf(2 * MIB), valueOf(MIB)]))];
    expect(Math.max(...chunks.map((c) => c.length))).to.be.at.most((VALUE_PIECE_BYTES / 3) * 4 + 64 * 1024);
    // The estimate that decides streaming: the values as base64, the keys, 256 bytes a result.
    const r = results([valueOf(2 * MIB), valueOf(MIB)]);
    const keys = r.reduce((n, x) => n + x.key.length, 0);
    expect(answerBytesEstimate(r)).to.equal(Math.ceil((2 * MIB) / 3) * 4 + Math.ceil(MIB / 3) * 4 + keys + 3 * 256);
  });

  it("the stream pauses between chunks (a turn of the event loop each) and yields the whole answer", async () => {
    let pauses = 0;
    const r = results([valueOf(MIB)]);
    const stream = answerStream(r, async () => {
      pauses++;
    });
    let text = "";
    for await (const chunk of stream) text += chunk as string;
    expect(JSON.parse(text)).to.deep.equal(answerObject(r));
    expect(pauses).to.be.at.least(Math.ceil(MIB / VALUE_PIECE_BYTES));
  });
});
