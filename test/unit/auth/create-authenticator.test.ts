import { expect } from "chai";
import bcrypt from "bcryptjs";
import { createAuthenticator, type AuthSettings } from "../../../src/auth/create-authenticator.js";
import { OidcSetupError } from "../../../src/auth/oidc-verifier.js";
import { PolicyFileError } from "../../../src/auth/policy-file.js";
import { CacheError } from "../../../src/core/errors.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { basicHeader, request, tlsNoCert } from "./chain-helpers.js";

const HASH = bcrypt.hashSync("pw", 4);
const POLICY = `tokens:\n  - {id: policy-reader, token: policy-token, scopes: [read]}\nusers:\n  - {username: u, password_hash: "${HASH}", scopes: [admin]}\n`;

const settings = (s: Partial<AuthSettings>): AuthSettings => ({ authToken: undefined, authConfigPath: undefined, oidc: undefined, authFailLimitPerS: 10, ...s });
const deps = { clock: new ManualClock(), readFile: () => Buffer.from(POLICY) };

/** The value, or the CacheError code (or other error) thrown synchronously or asynchronously. */
async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    return err instanceof CacheError ? err.code : err;
  }
}

describe("auth/create-authenticator createAuthenticator", () => {
  it("nothing configured: open, every caller anonymous with every scope", async () => {
    const auth = await createAuthenticator(settings({}), deps);
    expect(auth.enabled).to.equal(false);
    expect(auth.methods).to.deep.equal([]);
    expect(await outcome(() => auth.authenticate(request(undefined)))).to.deep.equal({ kind: "anonymous", id: "anonymous", scopes: ["read", "write", "admin"] });
  });

  it("SERVICE_AUTH_TOKEN alone: one identity `token` with every scope; anything else 401", async () => {
    const auth = await createAuthenticator(settings({ authToken: "shared-secret" }), deps);
    expect(auth.enabled).to.equal(true);
    expect(auth.methods).to.deep.equal(["static_token"]);
    expect(auth.authenticate(request("Bearer shared-secret"))).to.deep.equal({ kind: "token", id: "token", scopes: ["read", "write", "admin"] });
    expect(await outcome(() => auth.authenticate(request(undefined)))).to.equal("UNAUTHORIZED");
    expect(await outcome(() => auth.authenticate(request("Bearer shared-secreT")))).to.equal("UNAUTHORIZED");
  });

  it("token and policy file together: the file governs, the token is not a client credential", async () => {
    const auth = await createAuthenticator(settings({ authToken: "shared-secret", authConfigPath: "/etc/auth.yaml" }), deps);
    expect(auth.authenticate(request("Bearer policy-token"))).to.deep.equal({ kind: "token", id: "policy-reader", scopes: ["read"] });
    expect(await outcome(() => auth.authenticate(request("Bearer shared-secret")))).to.equal("UNAUTHORIZED");
    expect(await outcome(() => auth.authenticate(request(basicHeader("u", "pw"), tlsNoCert())))).to.deep.equal({ kind: "user", id: "u", scopes: ["admin"] });
    expect(auth.methods).to.deep.equal(["static_token", "basic"]);
  });

  it("a missing or invalid policy file rejects with PolicyFileError, never an open authenticator", async () => {
    const missing = await outcome(() => createAuthenticator(settings({ authConfigPath: "/nope/auth.yaml" }), { clock: new ManualClock() }));
    expect(missing).to.be.instanceOf(PolicyFileError);
    const bad = await outcome(() => createAuthenticator(settings({ authConfigPath: "/x.yaml" }), { clock: new ManualClock(), readFile: () => Buffer.from("tokens: [{id: a, token: b, scopes: [nope]}]") }));
    expect(bad).to.be.instanceOf(PolicyFileError);
  });

  it("an unreachable OIDC issuer rejects with OidcSetupError", async () => {
    const r = await outcome(() =>
      createAuthenticator(settings({ oidc: { issuer: "http://127.0.0.1:9", audience: "a", identityClaim: "sub", scopeClaim: "scope" } }), {
        clock: new ManualClock(),
        fetchJson: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:9")),
      }),
    );
    expect(r).to.be.instanceOf(OidcSetupError);
    expect((r as Error).message).to.contain("ECONNREFUSED");
  });
});
