// base64DecodedLength: the decoded size of standard base64 text, padded or not, computed without
// decoding (the batch put route checks a value's size limit with it before decoding), and
// undefined for anything that is not standard base64.
import { expect } from "chai";
import { base64DecodedLength } from "../../../src/core/byte-string.js";

/** `n` bytes of varied content. */
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 151 + 7) & 0xff));

describe("core/byte-string base64DecodedLength", () => {
  const valid: Array<[string, number]> = [
    ["", 0],
    ["QQ==", 1],
    ["QUI=", 2],
    ["QUJD", 3],
    ["QUJDRA==", 4],
    ["QUJDREU=", 5],
    ["QUJDREVG", 6],
    // Unpadded: the same sizes.
    ["QQ", 1],
    ["QUI", 2],
    ["QUJDRA", 4],
    ["QUJDREU", 5],
    // Every character of the standard alphabet.
    ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 48],
    ["//4A", 3],
  ];
  for (const [text, size] of valid) {
    it(`${JSON.stringify(text)} decodes to ${size} byte${size === 1 ? "" : "s"}`, () => {
      expect(base64DecodedLength(text)).to.equal(size);
      expect(Buffer.from(text, "base64").length, "agrees with Buffer's decoder").to.equal(size);
    });
  }

  it("matches the real decoded length of 0..200 bytes, padded and unpadded", () => {
    for (let n = 0; n <= 200; n++) {
      const padded = bytes(n).toString("base64");
      expect(base64DecodedLength(padded), `padded, ${n} bytes`).to.equal(n);
      const unpadded = padded.replace(/=+$/, "");
      expect(base64DecodedLength(unpadded), `unpadded, ${n} bytes`).to.equal(n);
    }
  });

  it("sizes a 15 MiB value's text (20 MiB of base64) exactly: 15 MiB, and one byte more", () => {
    const mib15 = 15 * 1024 * 1024;
    expect(base64DecodedLength("A".repeat((mib15 / 3) * 4))).to.equal(mib15);
    expect(base64DecodedLength(`${"A".repeat((mib15 / 3) * 4)}AA==`)).to.equal(mib15 + 1);
    expect(base64DecodedLength(`${"A".repeat((mib15 / 3) * 4)}AA`)).to.equal(mib15 + 1);
  });

  const invalid: Array<[string, string]> = [
    ["A", "one character (a length of 1 mod 4 is never base64)"],
    ["QUJDR", "five characters (1 mod 4)"],
    ["QUJDR===", "three padding characters"],
    ["====", "padding only"],
    ["=", "a lone padding character"],
    ["==", "two padding characters only"],
    ["QQ=", "partial padding (3 characters)"],
    ["QUJDRA=", "partial padding (7 characters)"],
    ["Q===", "a data character followed by three padding characters"],
    ["QQ==QQ==", "padding in the middle"],
    ["AB=C", "padding before a data character"],
    ["QU JD", "a space"],
    ["QUJD\n", "a trailing newline"],
    ["QUJD\r\nQUJD", "a line break"],
    ["ab-_", "the URL-safe alphabet"],
    ["QUJ*", "a character outside the alphabet"],
    ["QU\u0000D", "a NUL character"],
    ["QUJé", "a non-ASCII Latin-1 character"],
    ["ＱＵＪＤ", "full-width letters (char codes above 255)"],
    ["QU\uD83DJD", "a lone surrogate"],
  ];
  for (const [text, what] of invalid) {
    it(`is undefined for ${what}: ${JSON.stringify(text)}`, () => {
      expect(base64DecodedLength(text)).to.equal(undefined);
    });
  }
});
