// A forwarded write's error details travel in WriteResult.error_details_json, through the binary
// encoding, and come back as the details the coordinator gave; anything but a small JSON object
// is ignored.
import { expect } from "chai";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { WriteResultSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromWireResult, toWireResult } from "../../../src/peer/convert.js";
import type { WriteOutcome } from "../../../src/transport/index.js";

const failed: WriteOutcome = { key: "k", applied: false, bytes: 0, owners: ["n1", "n2", "n3"], version: 0, origin: "", errorCode: "QUORUM_FAILED", errorMessage: "write reached 1 of the 3 owners", expiresAtMs: 0, errorDetails: { consistency: "all", acknowledged: 1, required: 3 } };

const roundTrip = (o: WriteOutcome) => fromWireResult(fromBinary(WriteResultSchema, toBinary(WriteResultSchema, toWireResult(o, "n1"))));

describe("peer/convert: a forwarded write's error details", () => {
  it("come back as the coordinator gave them, through the binary encoding", () => {
    expect(roundTrip(failed).errorDetails).to.deep.equal({ consistency: "all", acknowledged: 1, required: 3 });
  });

  it("are absent when the coordinator gave none, or on success", () => {
    const { errorDetails: _none, ...without } = failed;
    expect(roundTrip(without)).to.not.have.property("errorDetails");
    expect(roundTrip({ ...failed, errorCode: "", errorMessage: "" })).to.not.have.property("errorDetails");
  });

  it("anything but a JSON object of at most 4096 characters is ignored", () => {
    const wire = (json: string) => fromWireResult({ ...toWireResult(failed, "n1"), errorDetailsJson: json });
    for (const json of ["[1,2]", "42", "null", "{not json", `{"a":"${"x".repeat(5000)}"}`]) expect(wire(json), json).to.not.have.property("errorDetails");
    expect(wire('{"a":1}').errorDetails).to.deep.equal({ a: 1 });
  });
});
