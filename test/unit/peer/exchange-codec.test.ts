// The frames of a binary Exchange stream as Connect hands them over (google.protobuf.Empty, every
// top-level field kept as an unknown field) are decoded to exactly what fromBinary gives for the
// bytes that were sent, or refused as malformed: never to another message. A peer controls those
// bytes, so they are mutated here the ways that make the two parses disagree: tags written in
// more bytes than needed (the frame is rebuilt with the shortest ones) and wire types that do
// not fit a known field.
import { fromBinary, toBinary, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { EmptySchema, type Empty } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import fc from "fast-check";
import { ExchangeRequestSchema, ExchangeResponseSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { messageArb } from "../../helpers/protobuf-arbitraries.js";
import { clientFrames, serverFrames } from "../../../src/peer/exchange-codec.js";
import { installFastTextEncoding } from "../../../src/peer/text-encoding.js";

const SEED = 1129;

/** What the codec makes of `bytes` sent as a frame: the message, "refused", or "connect" (Connect's own parse refuses it). */
function viaFrame<T>(decode: (frame: Empty) => T, bytes: Uint8Array, code: Code): T | "refused" | "connect" {
  let frame: Empty;
  try {
    frame = fromBinary(EmptySchema, bytes);
  } catch {
    return "connect";
  }
  try {
    return decode(frame);
  } catch (e) {
    expect(e).to.be.instanceOf(ConnectError);
    expect((e as ConnectError).code).to.equal(code);
    expect((e as ConnectError).rawMessage).to.match(/^parse binary: /);
    return "refused";
  }
}

function reference<T extends Message>(schema: GenMessage<T>, bytes: Uint8Array): T | undefined {
  try {
    return fromBinary(schema, bytes);
  } catch {
    return undefined;
  }
}

const hex = (s: string) => Uint8Array.from(Buffer.from(s.replace(/ /g, ""), "hex"));

describe("peer/exchange-codec", () => {
  before(() => installFastTextEncoding());

  it("refuses a frame whose id arrives as a fixed64 hiding a long tag, which would otherwise decode to another stored value", () => {
    // id (field 1) with wire type 1: Connect skips 8 bytes, fromBinary reads a varint and then a
    // Set call whose entry value runs over the tag `ca 80 00` (field 9, in 3 bytes), which the
    // rebuilt frame would write as `4a`: the value stored would be 41 4a 00 08 00, not the
    // 41 ca 80 00 00 sent.
    const bytes = hex("09 00 1a 09 0a 07 12 05 41 ca 80 00 00 08 00");
    expect(reference(ExchangeRequestSchema, bytes)).to.not.equal(undefined);
    expect(viaFrame(serverFrames().decode, bytes, Code.InvalidArgument)).to.equal("refused");
  });

  it("refuses a frame fromBinary refuses, where the shortened tag would have made it readable", () => {
    const bytes = hex("09 ffffffffffffffff ca8000 08 05 7a 05 0000000000");
    expect(reference(ExchangeRequestSchema, bytes)).to.equal(undefined);
    expect(viaFrame(serverFrames().decode, bytes, Code.InvalidArgument)).to.equal("refused");
  });

  for (const [name, schema, decode, code] of [
    ["requests (server side)", ExchangeRequestSchema, serverFrames().decode, Code.InvalidArgument],
    ["answers (calling side)", ExchangeResponseSchema, clientFrames().decode, Code.Internal],
  ] as const) {
    it(`${name}: a mutated frame decodes to what fromBinary gives for the bytes sent, or is refused`, () => {
      let compared = 0;
      fc.assert(
        fc.property(
          messageArb(schema, { unknown: true }),
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom("set", "cut", "insert", "drop", "lengthen", "wiretype")), { minLength: 1, maxLength: 3 }),
          (msg, edits) => {
            const bytes = [...toBinary(schema as GenMessage<Message>, msg)];
            for (const [at, value, how] of edits) {
              const i = bytes.length === 0 ? 0 : at % bytes.length;
              const b = bytes[i] ?? 0;
              if (how === "set") bytes[i] = value;
              else if (how === "cut") bytes.length = i;
              else if (how === "insert") bytes.splice(i, 0, value);
              else if (how === "drop") bytes.splice(i, 1);
              // A varint's last byte written in two (the same number, one byte longer).
              else if (how === "lengthen" && b < 0x80) bytes.splice(i, 1, b | 0x80, 0x00);
              else if (how === "wiretype") bytes[i] = (b & ~7) | (value % 6);
            }
            const input = Uint8Array.from(bytes);
            const got = viaFrame(decode as (frame: Empty) => Message, input, code);
            if (got === "refused" || got === "connect") return;
            const want = reference(schema as GenMessage<Message>, input);
            expect(want, "decoded a frame fromBinary refuses").to.not.equal(undefined);
            expect(got).to.deep.equal(want);
            compared++;
          },
        ),
        { seed: SEED, numRuns: 3000 },
      );
      // Not a pass by refusing everything: many mutated frames still decode, and are compared.
      expect(compared).to.be.greaterThan(300);
    });
  }
});
