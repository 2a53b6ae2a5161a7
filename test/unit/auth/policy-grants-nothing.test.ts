// A policy file that grants nothing (no tokens, users or cert_identities, anonymous access off)
// would boot a node nobody can use. Unless OIDC tokens are accepted too, it is refused at start-up
// like an empty file: a PolicyFileError, exit 2.
import { expect } from "chai";
import { createAuthenticator, type AuthSettings } from "../../../src/auth/create-authenticator.js";
import { PolicyFileError } from "../../../src/auth/policy-file.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { request } from "./chain-helpers.js";

const settings = (s: Partial<AuthSettings>): AuthSettings => ({ authToken: undefined, authConfigPath: "/etc/auth.yaml", oidc: undefined, authFailLimitPerS: 10, ...s });
const withPolicy = (text: string) => ({ clock: new ManualClock(), readFile: () => Buffer.from(text) });

async function rejection(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe("auth/create-authenticator: a policy file that grants nothing", () => {
  for (const text of ["{}", "tokens: []", "tokens: []\nusers: {}\ncert_identities: []", "allow_basic_without_tls: true", "allow_anonymous: false\ntokens: null"]) {
    it(`refuses ${JSON.stringify(text)} with PolicyFileError naming the file and why`, async () => {
      const err = await rejection(() => createAuthenticator(settings({}), withPolicy(text)));
      expect(err).to.be.instanceOf(PolicyFileError);
      expect((err as Error).message).to.contain("/etc/auth.yaml").and.contain("grants no identity");
    });
  }

  it("refuses it even with SERVICE_AUTH_TOKEN set (with a policy file that token is only the peer token)", async () => {
    expect(await rejection(() => createAuthenticator(settings({ authToken: "peer-secret" }), withPolicy("{}")))).to.be.instanceOf(PolicyFileError);
  });

  it("accepts a policy whose only grant is allow_anonymous, or a single token, user or certificate", async () => {
    for (const text of ["allow_anonymous: true", "tokens: [{id: a, token: t, scopes: []}]", "cert_identities: [{subject_cn: svc, scopes: [read]}]"]) {
      const auth = await createAuthenticator(settings({}), withPolicy(text));
      expect(auth.enabled, text).to.equal(true);
    }
    const anon = await createAuthenticator(settings({}), withPolicy("allow_anonymous: true"));
    expect(await anon.authenticate(request(undefined))).to.include({ id: "anonymous" });
  });

  it("is not refused when OIDC is configured: OIDC tokens are the grant (here the issuer is down, so OidcSetupError)", async () => {
    const oidc = { issuer: "http://127.0.0.1:9", audience: "a", identityClaim: "sub", scopeClaim: "scope" };
    const err = await rejection(() => createAuthenticator(settings({ oidc }), { ...withPolicy("{}"), fetchJson: () => Promise.reject(new Error("connect ECONNREFUSED")) }));
    expect(err).to.not.be.instanceOf(PolicyFileError);
    expect((err as Error).name).to.equal("OidcSetupError");
  });
});
