import { expect } from "chai";
import bcrypt from "bcryptjs";
import { loadPolicyFile, parsePolicy, PolicyFileError } from "../../../src/auth/policy-file.js";

const HASH = bcrypt.hashSync("secret", 4);

function expectPolicyError(text: string, ...fragments: string[]): void {
  let caught: unknown;
  try {
    parsePolicy(text, "auth.yaml");
  } catch (err) {
    caught = err;
  }
  expect(caught, "expected a PolicyFileError").to.be.instanceOf(PolicyFileError);
  const message = (caught as Error).message;
  expect(message).to.contain("auth.yaml");
  for (const f of fragments) expect(message).to.contain(f);
}

describe("auth/policy-file", () => {
  describe("valid files", () => {
    it("reads tokens, cert identities, users as a list and both flags from YAML", () => {
      const p = parsePolicy(
        [
          "tokens:",
          "  - {id: reader, token: r-token, scopes: [read]}",
          "  - {id: ops, token: o-token, scopes: [read, admin]}",
          "cert_identities:",
          "  - {subject_cn: svc-a, scopes: [read, write]}",
          "users:",
          `  - {username: alice, password_hash: "${HASH}", scopes: [write]}`,
          "allow_anonymous: true",
          "allow_basic_without_tls: true",
        ].join("\n"),
        "auth.yaml",
      );
      expect(p.tokens).to.deep.equal([
        { id: "reader", token: "r-token", scopes: ["read"] },
        { id: "ops", token: "o-token", scopes: ["read", "admin"] },
      ]);
      expect(p.certIdentities).to.deep.equal([{ subjectCn: "svc-a", scopes: ["read", "write"] }]);
      expect(p.users).to.deep.equal([{ username: "alice", passwordHash: HASH, scopes: ["write"] }]);
      expect(p.allowAnonymous).to.equal(true);
      expect(p.allowBasicWithoutTls).to.equal(true);
    });

    it("reads users given as a map {name: {password_hash, scopes}}", () => {
      const p = parsePolicy(`users:\n  bob:\n    password_hash: "${HASH}"\n    scopes: [read]\n  carol: {password_hash: "${HASH}", scopes: []}\n`, "auth.yaml");
      expect(p.users).to.deep.equal([
        { username: "bob", passwordHash: HASH, scopes: ["read"] },
        { username: "carol", passwordHash: HASH, scopes: [] },
      ]);
    });

    it("reads the same policy from JSON", () => {
      const json = JSON.stringify({ tokens: [{ id: "t", token: "tok", scopes: ["read", "write"] }], users: { dan: { password_hash: HASH, scopes: ["admin"] } } }, null, "\t");
      const p = parsePolicy(json, "auth.json");
      expect(p.tokens).to.deep.equal([{ id: "t", token: "tok", scopes: ["read", "write"] }]);
      expect(p.users[0]).to.include({ username: "dan" });
      expect(p.allowAnonymous).to.equal(false);
      expect(p.allowBasicWithoutTls).to.equal(false);
    });

    it("defaults both flags to false and missing sections to empty", () => {
      const p = parsePolicy("allow_anonymous: false\n", "auth.yaml");
      expect(p).to.deep.equal({ tokens: [], certIdentities: [], users: [], allowAnonymous: false, allowBasicWithoutTls: false });
    });

    it("loads a file through the injected reader", () => {
      const p = loadPolicyFile("/etc/auth.yaml", () => Buffer.from("tokens: [{id: a, token: b, scopes: [read]}]"));
      expect(p.tokens).to.have.length(1);
    });
  });

  describe("invalid files", () => {
    it("a missing file names the path", () => {
      expect(() => loadPolicyFile("/definitely/not/here.yaml")).to.throw(PolicyFileError, "/definitely/not/here.yaml");
      expect(() => loadPolicyFile("/definitely/not/here.yaml")).to.throw(PolicyFileError, "no such file");
    });

    it("malformed YAML", () => expectPolicyError("tokens: [ {id: a", "not valid YAML or JSON"));
    it("malformed JSON", () => expectPolicyError('{"tokens": [}', "not valid YAML or JSON"));
    it("an empty file", () => expectPolicyError("", "empty"));
    it("a top level that is not a mapping", () => expectPolicyError("- a\n- b\n", "expected a mapping"));
    it("a duplicate key", () => expectPolicyError("allow_anonymous: true\nallow_anonymous: false\n", "not valid YAML or JSON"));
    it("an unknown top-level key (a typo)", () => expectPolicyError("token: []\n", 'unknown key "token"'));
    it("an unknown scope name in a token", () => expectPolicyError("tokens: [{id: a, token: b, scopes: [read, raed]}]", "tokens[0].scopes[1]", 'unknown scope "raed"'));
    it("an unknown scope name in a cert identity", () => expectPolicyError("cert_identities: [{subject_cn: x, scopes: [superuser]}]", "cert_identities[0].scopes[0]", 'unknown scope "superuser"'));
    it("an unknown scope name in a user (map form)", () => expectPolicyError(`users: {eve: {password_hash: "${HASH}", scopes: [root]}}`, "users.eve.scopes[0]", 'unknown scope "root"'));
    it("scopes that are not a list", () => expectPolicyError("tokens: [{id: a, token: b, scopes: read}]", "tokens[0].scopes", "expected a list"));
    it("missing scopes", () => expectPolicyError("tokens: [{id: a, token: b}]", "tokens[0].scopes", "required"));
    it("a token without id", () => expectPolicyError("tokens: [{token: b, scopes: []}]", "tokens[0].id"));
    it("a token with spaces", () => expectPolicyError('tokens: [{id: a, token: "b c", scopes: []}]', "tokens[0].token", "visible ASCII"));
    it("a numeric token, without echoing it", () => {
      let message = "";
      try {
        parsePolicy("tokens: [{id: a, token: 987654321, scopes: []}]", "auth.yaml");
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).to.contain("tokens[0].token").and.not.contain("987654321");
    });
    it("the same token twice", () => expectPolicyError("tokens: [{id: a, token: t, scopes: []}, {id: b, token: t, scopes: []}]", "tokens[1].token", "listed twice"));
    it("a duplicate token id", () => expectPolicyError("tokens: [{id: a, token: t1, scopes: []}, {id: a, token: t2, scopes: []}]", 'duplicate id "a"'));
    it("a duplicate subject CN", () => expectPolicyError("cert_identities: [{subject_cn: x, scopes: []}, {subject_cn: x, scopes: []}]", "duplicate subject_cn"));
    it("a password that is not a bcrypt hash", () => expectPolicyError("users: [{username: a, password_hash: plaintext, scopes: []}]", "users[0].password_hash", "bcrypt"));
    it("a user name with a colon", () => expectPolicyError(`users: [{username: "a:b", password_hash: "${HASH}", scopes: []}]`, "colon"));
    it("an unknown key inside an entry", () => expectPolicyError(`users: [{username: a, password: x, password_hash: "${HASH}", scopes: []}]`, 'unknown key "password"'));
    it("a flag that is not a boolean", () => expectPolicyError('allow_anonymous: "yes"\n', "allow_anonymous", "true or false"));
  });
});

describe("auth/policy-file: rate limits", () => {
  it("tokens, users and certificate identities may carry rate_limit and rate_burst", () => {
    const p = parsePolicy(
      `tokens: [{id: a, token: tok-a, scopes: [read], rate_limit: 5, rate_burst: 9}, {id: b, token: tok-b, scopes: [read], rate_limit: 0}]\n` +
        `cert_identities: [{subject_cn: svc, scopes: [read], rate_limit: 2.5}]\n` +
        `users: [{username: u, password_hash: "${HASH}", scopes: [read], rate_limit: 1}]\n`,
      "auth.yaml",
    );
    expect(p.tokens[0]?.rateLimit).to.deep.equal({ ratePerS: 5, burst: 9 });
    expect(p.tokens[1]?.rateLimit).to.deep.equal({ ratePerS: 0 });
    expect(p.certIdentities[0]?.rateLimit).to.deep.equal({ ratePerS: 2.5 });
    expect(p.users[0]?.rateLimit).to.deep.equal({ ratePerS: 1 });
  });

  it("refuses a negative or non-numeric rate_limit, a rate_burst below 1, and a rate_burst without rate_limit", () => {
    expectPolicyError("tokens: [{id: a, token: t, scopes: [read], rate_limit: -1}]", "tokens[0].rate_limit", "-1");
    expectPolicyError("tokens: [{id: a, token: t, scopes: [read], rate_limit: fast}]", "tokens[0].rate_limit");
    expectPolicyError("tokens: [{id: a, token: t, scopes: [read], rate_limit: 1, rate_burst: 0}]", "tokens[0].rate_burst");
    expectPolicyError("tokens: [{id: a, token: t, scopes: [read], rate_burst: 3}]", "tokens[0].rate_burst", "needs rate_limit");
  });
});
