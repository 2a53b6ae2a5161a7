import { expect } from "chai";
import { parseAuthorization } from "../../../src/auth/authorization-header.js";
import { AUTH_HEADER_BYTES_MAX } from "../../../src/auth/auth-limits.js";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

describe("auth/authorization-header parseAuthorization", () => {
  it("no header is no credential", () => {
    expect(parseAuthorization(undefined)).to.deep.equal({ kind: "none" });
  });

  it("reads a Bearer token, the scheme in any case", () => {
    for (const h of ["Bearer abc.def-_~+/=", "bearer abc.def-_~+/=", "BEARER   abc.def-_~+/=  "]) {
      expect(parseAuthorization(h)).to.deep.equal({ kind: "bearer", token: "abc.def-_~+/=" });
    }
  });

  it("reads Basic user and password, splitting at the first colon and decoding UTF-8", () => {
    expect(parseAuthorization(`Basic ${b64("alice:pa:ss")}`)).to.deep.equal({ kind: "basic", username: "alice", password: "pa:ss" });
    expect(parseAuthorization(`basic ${b64("jürgen:pässwörd")}`)).to.deep.equal({ kind: "basic", username: "jürgen", password: "pässwörd" });
    expect(parseAuthorization(`Basic ${b64("bob:")}`)).to.deep.equal({ kind: "basic", username: "bob", password: "" });
  });

  const invalid: Array<[string, string]> = [
    ["empty", ""],
    ["only spaces", "   "],
    ["a scheme alone", "Bearer"],
    ["a scheme and spaces", "Bearer    "],
    ["a token with inner spaces", "Bearer a b"],
    ["an odd scheme", "Digest username=x"],
    ["a made-up scheme", "Token abc"],
    ["no scheme", "abc.def.ghi"],
    ["a non-ASCII token", "Bearer t\u00f6ken"],
    ["a non-ASCII scheme", "B\u00e9arer abc"],
    ["Basic without a colon", `Basic ${b64("alice")}`],
    ["Basic with an empty user", `Basic ${b64(":pw")}`],
    ["Basic with bad base64", "Basic !!!notbase64"],
    ["Basic with base64 of invalid UTF-8", `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString("base64")}`],
    ["Basic without a credential", "Basic"],
    ["too long", `Bearer ${"a".repeat(AUTH_HEADER_BYTES_MAX)}`],
  ];
  for (const [what, value] of invalid) {
    it(`${what} is invalid`, () => {
      expect(parseAuthorization(value).kind).to.equal("invalid");
    });
  }
});
