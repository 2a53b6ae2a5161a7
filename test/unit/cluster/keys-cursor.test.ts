import { expect } from "chai";
import { expectBadRequest } from "../../helpers/expect-error.js";
import { encodeCursor } from "../../../src/core/cursor.js";
import { decodeKeysCursor, encodeKeysCursor } from "../../../src/cluster/keys-cursor.js";


describe("dist/keys-cursor", () => {
  it("round-trips shard and slot", () => {
    for (const [shard, slot] of [[0, 0], [0, 1], [5, 123], [31, 99_999]] as const) {
      expect(decodeKeysCursor(encodeKeysCursor(shard, slot), 32)).to.deep.equal({ shard, slot });
    }
  });

  it("the empty cursor is the start: shard 0, slot 0", () => {
    expect(decodeKeysCursor("", 32)).to.deep.equal({ shard: 0, slot: 0 });
  });

  it("produces an opaque, URL-safe token", () => {
    const c = encodeKeysCursor(3, 17);
    expect(c).to.match(/^[A-Za-z0-9_-]+$/);
    expect(c).to.not.include("17");
    expect(c).to.not.equal(encodeKeysCursor(3, 18));
  });

  it("rejects a shard outside this node's shard count with BAD_REQUEST", () => {
    const c = encodeKeysCursor(32, 0);
    expectBadRequest(() => decodeKeysCursor(c, 32));
    expect(decodeKeysCursor(c, 33)).to.deep.equal({ shard: 32, slot: 0 });
  });

  it("rejects garbage and non-base64url text with BAD_REQUEST", () => {
    for (const text of ["garbage!", "AAAA", "abc+/=", " "]) {
      const e = expectBadRequest(() => decodeKeysCursor(text, 32));
      expect(e.message).to.match(/cursor/);
    }
  });

  it("rejects forged cursors with negative, fractional, string or missing fields", () => {
    for (const fields of [{ s: -1, i: 0 }, { s: 0, i: -1 }, { s: 0.5, i: 0 }, { s: 0, i: 1.5 }, { s: "0", i: 0 }, { s: 0 }, { i: 0 }, {}]) {
      expectBadRequest(() => decodeKeysCursor(encodeCursor(fields as Record<string, number | string>), 32));
    }
  });

  it("rejects a cursor of another kind (the key browser's offset cursor)", () => {
    expectBadRequest(() => decodeKeysCursor(encodeCursor({ o: 10, f: "abc" }), 32));
  });
});
