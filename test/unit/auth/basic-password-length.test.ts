// bcrypt reads only the first 72 bytes of a password, so a longer password would be accepted with
// any suffix after its 72nd byte. A Basic password over 72 bytes (UTF-8) is refused without a
// bcrypt check: 401 from the chain, counted by the failure limiter.
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import bcrypt from "bcryptjs";
import { BasicVerifier, BASIC_PASSWORD_BYTES_MAX } from "../../../src/auth/basic-auth.js";
import { buildChain } from "../../../src/auth/chain.js";
import { CertIdentityTable } from "../../../src/auth/client-cert.js";
import { AuthFailLimiter } from "../../../src/auth/fail-limiter.js";
import { StaticTokenTable } from "../../../src/auth/static-tokens.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { basicHeader, countingCompare, resolve } from "./chain-helpers.js";

const P72 = "A".repeat(72);
const E72 = "é".repeat(36); // 72 bytes in UTF-8
const USERS = [
  { username: "bob", passwordHash: bcrypt.hashSync(P72, 4), scopes: ["read"] as const },
  { username: "eve", passwordHash: bcrypt.hashSync(E72, 4), scopes: ["read"] as const },
];


describe("auth/basic-auth: passwords longer than bcrypt's 72 bytes", () => {
  it("the limit is 72 bytes", () => {
    expect(BASIC_PASSWORD_BYTES_MAX).to.equal(72);
  });

  it("accepts a password of exactly 72 bytes, ASCII or not", async () => {
    const v = new BasicVerifier(USERS, { clock: new ManualClock() });
    expect(await v.verify("bob", P72)).to.include({ id: "bob" });
    expect(await v.verify("eve", E72)).to.include({ id: "eve" });
  });

  it("refuses the 72-byte password followed by any suffix, without a bcrypt check", async () => {
    const c = countingCompare();
    const v = new BasicVerifier(USERS, { clock: new ManualClock(), compare: c.compare });
    for (const suffix of ["B", "anything-else-at-all", "é"]) expect(await v.verify("bob", P72 + suffix), suffix).to.equal(undefined);
    expect(await v.verify("eve", E72 + "x")).to.equal(undefined);
    // 37 × "é" is 74 bytes: over the limit although only 37 characters.
    expect(await v.verify("eve", "é".repeat(37))).to.equal(undefined);
    expect(c.calls()).to.equal(0);
  });

  it("a too long password is a counted 401 in the chain: past the limit 429", async () => {
    const clock = new ManualClock();
    const auth = buildChain({
      tokens: new StaticTokenTable([]),
      basic: new BasicVerifier(USERS, { clock }),
      certs: new CertIdentityTable([]),
      oidc: undefined,
      allowAnonymous: false,
      allowBasicWithoutTls: true,
      limiter: new AuthFailLimiter({ clock, limitPerS: 2 }),
    });
    const req = { headers: { authorization: basicHeader("bob", `${P72}B`) }, socket: { remoteAddress: "10.0.0.3" } } as unknown as IncomingMessage;
    expect([await resolve(auth, req), await resolve(auth, req), await resolve(auth, req)]).to.deep.equal(["UNAUTHORIZED", "UNAUTHORIZED", "TOO_MANY_REQUESTS"]);
  });
});
