// The compiled encoder writes the bytes protobuf-es's toBinary writes: for random messages of
// every type the Exchange stream carries, unknown fields at every level included, it never gives
// up and its bytes equal toBinary's; a value of the wrong type makes it give up (toBinary decides).
import { create, toBinary, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { expect } from "chai";
import fc from "fast-check";
import { EntrySchema, ExchangeRequestSchema, ExchangeResponseSchema, GetResultSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { compileEncoder } from "../../../src/peer/binary-encoder.js";
import { installFastTextEncoding } from "../../../src/peer/text-encoding.js";
import { messageArb } from "../../helpers/protobuf-arbitraries.js";

const SEED = 2811;

describe("peer/binary-encoder", () => {
  before(() => installFastTextEncoding());

  for (const [name, typed] of [["ExchangeRequest", ExchangeRequestSchema], ["ExchangeResponse", ExchangeResponseSchema]] as const) {
    it(`writes toBinary's bytes for random ${name} messages, unknown fields at every level included`, () => {
      const schema = typed as unknown as GenMessage<Message>;
      const encode = compileEncoder(schema);
      fc.assert(
        fc.property(messageArb(schema, { unknown: true }), (msg) => {
          const got = encode(msg);
          expect(got, "gave up on a well-typed message").to.not.equal(undefined);
          expect(Buffer.from(got as Uint8Array).equals(Buffer.from(toBinary(schema, msg)))).to.equal(true);
        }),
        { seed: SEED, numRuns: 800 },
      );
    });
  }

  it("gives up on a value of the wrong type: a number where a bigint goes, a message of another type", () => {
    const entry = create(EntrySchema, { key: "k", version: 5n });
    const encode = compileEncoder(EntrySchema);
    expect(encode(entry)).to.not.equal(undefined);
    expect(encode({ ...entry, version: 5 as unknown as bigint })).to.equal(undefined);
    const result = create(GetResultSchema, { key: "k", found: true });
    expect(compileEncoder(GetResultSchema)({ ...result, entry: create(GetResultSchema) as never })).to.equal(undefined);
  });

  it("gives up on unknown fields toBinary writes otherwise (a field number past 2^29 - 1, a wire type past 5, a $unknown that is no list) and on a oneof case without a value", () => {
    const entry = create(EntrySchema, { key: "k" });
    const encode = compileEncoder(EntrySchema);
    const data = new Uint8Array([1]);
    expect(encode({ ...entry, $unknown: [{ no: 40, wireType: 0, data }] })).to.deep.equal(toBinary(EntrySchema, { ...entry, $unknown: [{ no: 40, wireType: 0, data }] }));
    expect(encode({ ...entry, $unknown: [{ no: 2 ** 29, wireType: 0, data }] })).to.equal(undefined);
    expect(encode({ ...entry, $unknown: [{ no: 40, wireType: 6 as never, data }] })).to.equal(undefined);
    expect(encode({ ...entry, $unknown: null as never })).to.equal(undefined);
    const request = create(ExchangeRequestSchema, { id: 3n });
    expect(compileEncoder(ExchangeRequestSchema)({ ...request, call: { case: "set" } as never })).to.equal(undefined);
  });

  it("writes negative int32 and int64 values as ten-byte varints, as toBinary does", () => {
    const encode = compileEncoder(EntrySchema);
    const entry = create(EntrySchema, { expiresAtUnixMs: -1n, lastUpdatedUnixMs: -(2n ** 63n) });
    expect(Buffer.from(encode(entry) as Uint8Array).toString("hex")).to.equal(Buffer.from(toBinary(EntrySchema, entry)).toString("hex"));
  });
});
