import { expect } from "chai";
import { fromWireOwnerChecks, toWireOwnerChecks } from "../../../src/peer/owner-checks.js";
import { CacheError } from "../../../src/core/errors.js";
import { OwnerListSchema } from "../../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { create } from "@bufbuild/protobuf";

const a = ["n1", "n2", "n3"];
const b = ["n1", "n3", "n2"];

describe("peer/owner-checks (SetRequest and RemoveRequest)", () => {
  it("no checks, or only empty ones: no field set", () => {
    expect(toWireOwnerChecks(undefined)).to.deep.include({ expectedOwners: [], entryOwnerLists: [] });
    expect(toWireOwnerChecks([undefined, undefined])).to.deep.include({ expectedOwners: [], entryOwnerLists: [0, 0] });
    expect(fromWireOwnerChecks(toWireOwnerChecks(undefined), 3)).to.equal(undefined);
  });

  it("every record with the same list: expected_owners alone, which every receiver knows", () => {
    const w = toWireOwnerChecks([a, a, a]);
    expect(w.expectedOwners).to.deep.equal(a);
    expect(w.entryOwnerLists).to.deep.equal([]);
    expect(fromWireOwnerChecks(w, 3)).to.deep.equal([a, a, a]);
  });

  it("mixed lists and records without one: each distinct list once, a number per entry, back as sent", () => {
    const checks = [a, undefined, b, [...a]];
    const w = toWireOwnerChecks(checks);
    expect(w.expectedOwners).to.deep.equal([]);
    expect(w.ownerLists.map((l) => l.ids)).to.deep.equal([a, b]);
    expect(w.entryOwnerLists).to.deep.equal([1, 0, 2, 1]);
    expect(fromWireOwnerChecks(w, 4)).to.deep.equal(checks);
  });

  it("numbers that do not fit the entries are BAD_REQUEST, never a skipped check", () => {
    const w = toWireOwnerChecks([a, b]);
    for (const bad of [{ ...w, entryOwnerLists: [1] }, { ...w, entryOwnerLists: [1, 3] }, { ...w, entryOwnerLists: [1, 2, 0] }]) {
      expect(() => fromWireOwnerChecks(bad, 2)).to.throw(CacheError).with.property("code", "BAD_REQUEST");
    }
  });

  it("a check that would be skipped or is out of bounds is BAD_REQUEST: an empty referenced list, lists without numbers, both forms at once, more lists than entries, an oversized list", () => {
    const list = (ids: string[]) => create(OwnerListSchema, { ids });
    const none = { expectedOwners: [] as string[], ownerLists: [list(a)], entryOwnerLists: [] as number[] };
    const bad = [
      { ...none, ownerLists: [list([])], entryOwnerLists: [1, 1] },
      none,
      { ...none, expectedOwners: a, entryOwnerLists: [1, 9] },
      { ...none, ownerLists: [list(a), list(b), list(["n9"])], entryOwnerLists: [1, 2] },
      { ...none, ownerLists: [list(Array.from({ length: 65 }, (_, i) => `n${i}`))], entryOwnerLists: [1, 1] },
      { expectedOwners: Array.from({ length: 65 }, (_, i) => `n${i}`), ownerLists: [], entryOwnerLists: [] },
    ];
    for (const [i, req] of bad.entries()) expect(() => fromWireOwnerChecks(req, 2), `case ${i}`).to.throw(CacheError).with.property("code", "BAD_REQUEST");
  });
});
