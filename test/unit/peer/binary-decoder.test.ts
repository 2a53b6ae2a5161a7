// The compiled decoder reads what protobuf-es's fromBinary reads, to the same messages: for
// random messages of every type the Exchange stream carries it never gives up on protobuf-es's
// own encoding and gives equal results; for non-canonical encodings (unpacked lists, fields out
// of order, repeated scalars, unknown fields) it gives equal results or gives up; for corrupted
// bytes it gives up, or gives what fromBinary gives (never a different message, never a message
// where fromBinary throws).
import { create, fromBinary, toBinary, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { expect } from "chai";
import fc from "fast-check";
import { ExchangeRequestSchema, ExchangeResponseSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { messageArb, reachable, unknownFieldsArb } from "../../helpers/protobuf-arbitraries.js";
import { compileDecoder } from "../../../src/peer/binary-decoder.js";
import { installFastTextEncoding } from "../../../src/peer/text-encoding.js";

const SEED = 1128;

/** The message fromBinary gives, or the fact that it throws. */
function reference<T extends Message>(schema: GenMessage<T>, bytes: Uint8Array): { ok: true; msg: T } | { ok: false } {
  try {
    return { ok: true, msg: fromBinary(schema, bytes) };
  } catch {
    return { ok: false };
  }
}

const SCHEMAS = [
  ["ExchangeRequest", ExchangeRequestSchema],
  ["ExchangeResponse", ExchangeResponseSchema],
] as const;

describe("peer/binary-decoder", () => {
  before(() => installFastTextEncoding());

  it("gives the zero message of every type the Exchange stream carries for empty input, as create() does", () => {
    for (const [, schema] of SCHEMAS) {
      for (const desc of reachable(schema).values()) {
        expect(compileDecoder(desc as GenMessage<Message>)(new Uint8Array(0)), desc.typeName).to.deep.equal(create(desc));
      }
    }
  });

  for (const [name, typed] of SCHEMAS) {
    describe(name, () => {
      const schema = typed as unknown as GenMessage<Message>;
      const decode = compileDecoder(schema);

      it("reads protobuf-es's own encoding of random messages to fromBinary's result, without giving up", () => {
        fc.assert(
          fc.property(messageArb(schema), (msg) => {
            const bytes = toBinary(schema, msg);
            const got = decode(bytes);
            expect(got, "gave up on a canonical encoding").to.not.equal(undefined);
            expect(got).to.deep.equal(fromBinary(schema, bytes));
          }),
          { seed: SEED, numRuns: 600 },
        );
      });

      it("reads unknown fields into $unknown as fromBinary does", () => {
        fc.assert(
          fc.property(messageArb(schema), unknownFieldsArb, fc.nat(), (msg, extra, cut) => {
            const bytes = toBinary(schema, msg);
            // Unknown fields appended, or put in front of the message: both are one message.
            const tail = Uint8Array.from(extra.flat());
            const joined = cut % 2 === 0 ? Uint8Array.from([...bytes, ...tail]) : Uint8Array.from([...tail, ...bytes]);
            const got = decode(joined);
            expect(got, "gave up on unknown fields").to.not.equal(undefined);
            expect(got).to.deep.equal(fromBinary(schema, joined));
          }),
          { seed: SEED + 1, numRuns: 300 },
        );
      });

      it("on two messages' bytes joined (fields repeated, messages merged) gives fromBinary's result or gives up", () => {
        fc.assert(
          fc.property(messageArb(schema), messageArb(schema), (a, b) => {
            const joined = Uint8Array.from([...toBinary(schema, a), ...toBinary(schema, b)]);
            const got = decode(joined);
            if (got !== undefined) expect(got).to.deep.equal(fromBinary(schema, joined));
          }),
          { seed: SEED + 2, numRuns: 300 },
        );
      });

      it("on corrupted bytes gives up, or gives exactly what fromBinary gives", () => {
        let gaveUp = 0;
        fc.assert(
          fc.property(
            messageArb(schema),
            fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom("set", "cut", "insert", "drop")), { minLength: 1, maxLength: 3 }),
            (msg, edits) => {
              const bytes = [...toBinary(schema, msg)];
              for (const [at, value, how] of edits) {
                const i = bytes.length === 0 ? 0 : at % bytes.length;
                if (how === "set") bytes[i] = value;
                else if (how === "cut") bytes.length = i;
                else if (how === "insert") bytes.splice(i, 0, value);
                else bytes.splice(i, 1);
              }
              const input = Uint8Array.from(bytes);
              const want = reference(schema, input);
              const got = decode(input);
              if (got === undefined) {
                gaveUp++;
                return;
              }
              expect(want.ok, "decoded bytes that fromBinary refuses").to.equal(true);
              if (want.ok) expect(got).to.deep.equal(want.msg);
            },
          ),
          { seed: SEED + 3, numRuns: 2000 },
        );
        // The check must not pass by giving up every time: about one corruption in eight still
        // decodes (a changed value, a field cut at its boundary), and is compared.
        expect(gaveUp).to.be.lessThan(1900);
      });
    });
  }

  it("reads a packed list written unpacked, one element per field, as fromBinary does", () => {
    // SetResponse.outcomes (field 1 of SetResponse, field 3 of ExchangeResponse): 1, 2, 3 unpacked.
    const setResponse = [0x08, 1, 0x08, 2, 0x08, 3];
    const bytes = Uint8Array.from([0x08, 7, 0x1a, setResponse.length, ...setResponse]);
    const got = compileDecoder(ExchangeResponseSchema)(bytes);
    expect(got).to.deep.equal(fromBinary(ExchangeResponseSchema, bytes));
    expect(got?.result.case === "set" && got.result.value.outcomes).to.deep.equal([1, 2, 3]);
  });

  it("gives up on invalid UTF-8 in a string, where fromBinary refuses it", () => {
    // ExchangeError.message (field 2) inside ExchangeResponse.error (field 6): bytes C3 28.
    const error = [0x12, 2, 0xc3, 0x28];
    const bytes = Uint8Array.from([0x32, error.length, ...error]);
    expect(compileDecoder(ExchangeResponseSchema)(bytes)).to.equal(undefined);
    expect(() => fromBinary(ExchangeResponseSchema, bytes)).to.throw();
  });

  it("gives up on a oneof given twice, which fromBinary merges", () => {
    const get = [0x0a, 1, 0x61]; // GetRequest.keys = ["a"]
    const bytes = Uint8Array.from([0x2a, get.length, ...get, 0x2a, get.length, ...get]);
    expect(compileDecoder(ExchangeRequestSchema)(bytes)).to.equal(undefined);
    const merged = fromBinary(ExchangeRequestSchema, bytes);
    expect(merged.call.case === "get" && merged.call.value.keys).to.deep.equal(["a", "a"]);
  });
});
