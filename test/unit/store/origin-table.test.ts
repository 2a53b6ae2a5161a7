// OriginTable: origins (node ids) interned to small integer ids, shared by a store's shards.
import { expect } from "chai";
import { OriginTable, ORIGINS_MAX } from "../../../src/store/origin-table.js";
import { CacheError } from "../../../src/core/errors.js";

describe("store/origin-table OriginTable", () => {
  it("maps the empty origin to id 0", () => {
    const t = new OriginTable();
    expect(t.idOf("")).to.equal(0);
    expect(t.nameOf(0)).to.equal("");
  });

  it("gives each new origin the next id, the same id when seen again, and maps ids back to names", () => {
    const t = new OriginTable();
    expect([t.idOf("n1"), t.idOf("n2"), t.idOf("n1"), t.idOf("n3")]).to.deep.equal([1, 2, 1, 3]);
    expect([t.nameOf(1), t.nameOf(2), t.nameOf(3)]).to.deep.equal(["n1", "n2", "n3"]);
  });

  it(`holds ${ORIGINS_MAX} distinct non-empty origins (16-bit ids), then refuses a new one with BAD_REQUEST`, () => {
    expect(ORIGINS_MAX).to.equal(65_535);
    const t = new OriginTable();
    for (let i = 1; i <= ORIGINS_MAX; i++) expect(t.idOf(`o${i}`)).to.equal(i);
    expect(t.nameOf(ORIGINS_MAX)).to.equal(`o${ORIGINS_MAX}`);
    let thrown: unknown;
    try {
      t.idOf("one-too-many");
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(CacheError);
    expect((thrown as CacheError).code).to.equal("BAD_REQUEST");
    expect(t.idOf("o1")).to.equal(1); // known origins still resolve
  });
});
