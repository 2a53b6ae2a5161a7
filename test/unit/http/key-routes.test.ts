import { expect } from "chai";
import { expectBadRequest as badRequestFrom } from "../../helpers/expect-error.js";
import { decodeCursor, encodeCursor } from "../../../src/core/cursor.js";
import { decodeBrowseCursor, encodeBrowseCursor } from "../../../src/http/key-routes.js";

/** Every cursor refusal is a 400 naming the cursor. */
const expectBadRequest = (fn: () => unknown) => badRequestFrom(fn, /cursor/);

describe("http/key-routes browse cursor", () => {
  it("round-trips the offset for the same q and max", () => {
    for (const [offset, q, max] of [[0, "", 10_000], [100, "user:", 10_000], [49_900, "user:*", 50_000], [5, "日本😀[a-z]", 7]] as const) {
      expect(decodeBrowseCursor(encodeBrowseCursor(offset, q, max), q, max)).to.equal(offset);
    }
  });

  it("is opaque and URL-safe", () => {
    expect(encodeBrowseCursor(100, "user:*", 10_000)).to.match(/^[A-Za-z0-9_-]+$/);
  });

  it("is bound to q: reusing it with another query is a 400", () => {
    const c = encodeBrowseCursor(100, "user:", 10_000);
    expectBadRequest(() => decodeBrowseCursor(c, "order:", 10_000));
    expectBadRequest(() => decodeBrowseCursor(c, "user:*", 10_000));
    expectBadRequest(() => decodeBrowseCursor(c, "", 10_000));
  });

  it("is bound to max: reusing it with another max is a 400", () => {
    const c = encodeBrowseCursor(100, "user:", 10_000);
    expectBadRequest(() => decodeBrowseCursor(c, "user:", 9_999));
    expectBadRequest(() => decodeBrowseCursor(c, "user:", 50_000));
  });

  it("does not confuse q and max across the separator (\"a\" + 12 vs \"a1\" + 2)", () => {
    const c = encodeBrowseCursor(1, "a", 12);
    expectBadRequest(() => decodeBrowseCursor(c, "a1", 2));
  });

  it("rejects garbage, the empty string and non-base64url text", () => {
    for (const text of ["", "garbage", "AAAA", "abc+/=", "%7B%7D"]) {
      expectBadRequest(() => decodeBrowseCursor(text, "", 10_000));
    }
  });

  it("rejects a forged offset (negative, fractional, string or missing) even with the right fingerprint", () => {
    const genuine = decodeCursor(encodeBrowseCursor(10, "q", 100)) as Record<string, number | string>;
    expect(genuine).to.have.property("f");
    for (const o of [-1, 1.5, "10", undefined]) {
      const forged: Record<string, number | string> = { f: genuine.f as string };
      if (o !== undefined) forged.o = o;
      expectBadRequest(() => decodeBrowseCursor(encodeCursor(forged), "q", 100));
    }
  });

  it("rejects a cursor with a tampered fingerprint", () => {
    expectBadRequest(() => decodeBrowseCursor(encodeCursor({ o: 10, f: "zzz" }), "q", 100));
  });

  it("rejects a peer key-page cursor (another cursor kind)", () => {
    expectBadRequest(() => decodeBrowseCursor(encodeCursor({ s: 0, i: 10 }), "", 10_000));
  });
});
