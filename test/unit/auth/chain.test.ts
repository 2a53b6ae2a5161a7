import { expect } from "chai";
import { challengeFor } from "../../../src/auth/chain.js";
import { CacheError } from "../../../src/core/errors.js";
import { basicHeader, chain, fakeOidc, plaintext, request, resolve, tlsCert, tlsNoCert } from "./chain-helpers.js";

describe("auth/chain", () => {
  describe("each method on its own", () => {
    it("a static token resolves synchronously to its identity", () => {
      const r = chain().authenticate(request("Bearer static-token-1"));
      expect(r).to.deep.equal({ kind: "token", id: "static-1", scopes: ["read"] });
    });

    it("Basic over TLS resolves to the user", async () => {
      expect(await resolve(chain(), request(basicHeader("alice", "alice-pw"), tlsNoCert()))).to.deep.equal({ kind: "user", id: "alice", scopes: ["write"] });
    });

    it("Basic over plaintext is refused with 401 even with the right password", async () => {
      expect(await resolve(chain(), request(basicHeader("alice", "alice-pw"), plaintext()))).to.equal("UNAUTHORIZED");
    });

    it("Basic over plaintext is accepted with allow_basic_without_tls", async () => {
      expect(await resolve(chain({ allowBasicWithoutTls: true }), request(basicHeader("alice", "alice-pw")))).to.deep.include({ id: "alice" });
    });

    it("a wrong Basic password is 401", async () => {
      expect(await resolve(chain(), request(basicHeader("alice", "nope"), tlsNoCert()))).to.equal("UNAUTHORIZED");
    });

    it("a verified client certificate with a listed CN resolves to its cert identity", async () => {
      expect(await resolve(chain(), request(undefined, tlsCert("svc-a")))).to.deep.equal({ kind: "cert", id: "svc-a", scopes: ["admin"] });
    });

    it("a verified client certificate with an unlisted CN is 401", async () => {
      expect(await resolve(chain(), request(undefined, tlsCert("svc-unknown")))).to.equal("UNAUTHORIZED");
    });

    it("an unverified client certificate never matches, even with a listed CN", async () => {
      expect(await resolve(chain(), request(undefined, tlsCert("svc-a", false)))).to.equal("UNAUTHORIZED");
    });

    it("a bearer token unknown to the static table goes to the OIDC verifier", async () => {
      const oidc = fakeOidc();
      expect(await resolve(chain({ oidc }), request("Bearer jwt.carol.read_write"))).to.deep.equal({ kind: "oidc", id: "carol", scopes: ["read", "write"] });
      expect(oidc.calls).to.equal(1);
    });

    it("a bearer token the OIDC verifier refuses is 401", async () => {
      expect(await resolve(chain({ oidc: fakeOidc() }), request("Bearer not.a.jwt"))).to.equal("UNAUTHORIZED");
    });

    it("without OIDC an unknown bearer token is 401", async () => {
      expect(await resolve(chain(), request("Bearer jwt.carol.read"))).to.equal("UNAUTHORIZED");
    });

    it("a token that is not a compact JWT never reaches the OIDC verifier", async () => {
      const oidc = fakeOidc();
      expect(await resolve(chain({ oidc }), request("Bearer opaque-token"))).to.equal("UNAUTHORIZED");
      expect(oidc.calls).to.equal(0);
    });
  });

  describe("order: static bearer, Basic, mTLS CN, OIDC; first match wins", () => {
    it("a static token wins over the client certificate and never reaches OIDC", async () => {
      const oidc = fakeOidc();
      expect(await resolve(chain({ oidc }), request("Bearer static-token-1", tlsCert("svc-a")))).to.deep.include({ id: "static-1" });
      expect(oidc.calls).to.equal(0);
    });

    it("Basic wins over the client certificate", async () => {
      expect(await resolve(chain(), request(basicHeader("alice", "alice-pw"), tlsCert("svc-a")))).to.deep.include({ id: "alice" });
    });

    it("the client certificate wins over an OIDC token, once the token is verified", async () => {
      const oidc = fakeOidc();
      expect(await resolve(chain({ oidc }), request("Bearer jwt.carol.read", tlsCert("svc-a")))).to.deep.include({ id: "svc-a" });
      expect(oidc.calls).to.equal(1);
    });

    it("a wrong Basic password never falls through to a listed client certificate: 401", async () => {
      expect(await resolve(chain(), request(basicHeader("alice", "nope"), tlsCert("svc-a")))).to.equal("UNAUTHORIZED");
    });

    it("an unlisted certificate CN falls through to OIDC", async () => {
      expect(await resolve(chain({ oidc: fakeOidc() }), request("Bearer jwt.carol.read", tlsCert("svc-unknown")))).to.deep.include({ id: "carol" });
    });
  });

  describe("anonymous", () => {
    it("a request with no credential is 401 unless allow_anonymous", async () => {
      expect(await resolve(chain(), request(undefined))).to.equal("UNAUTHORIZED");
      expect(await resolve(chain({ oidc: fakeOidc() }), request(undefined))).to.equal("UNAUTHORIZED");
    });

    it("allow_anonymous gives id anonymous with every scope to a request with no credential", async () => {
      expect(await resolve(chain({ allowAnonymous: true }), request(undefined))).to.deep.equal({ kind: "anonymous", id: "anonymous", scopes: ["read", "write", "admin"] });
    });

    it("allow_anonymous never rescues a wrong credential", async () => {
      const auth = chain({ allowAnonymous: true, allowBasicWithoutTls: true, oidc: fakeOidc() });
      for (const h of ["Bearer wrong-token", "Bearer jwt..", basicHeader("alice", "wrong"), "Digest x", ""]) {
        expect(await resolve(auth, request(h)), h).to.equal("UNAUTHORIZED");
      }
      expect(await resolve(auth, request(undefined, tlsCert("svc-unknown")))).to.equal("UNAUTHORIZED");
    });
  });

  describe("the challenge and the method list", () => {
    it("lists Bearer and Basic when both are configured", () => {
      const auth = chain({ oidc: fakeOidc() });
      expect(auth.challenge).to.equal('Bearer realm="hypercache", Basic realm="hypercache", charset="UTF-8"');
      expect(auth.methods).to.deep.equal(["static_token", "basic", "mtls", "oidc"]);
      expect(auth.enabled).to.equal(true);
    });

    it("lists only Basic when only users are configured, only Bearer when only tokens or OIDC are", () => {
      expect(chain({ tokens: false, certs: false }).challenge).to.equal('Basic realm="hypercache", charset="UTF-8"');
      expect(chain({ users: false, certs: false }).challenge).to.equal('Bearer realm="hypercache"');
      expect(challengeFor(false, false)).to.equal('Bearer realm="hypercache"');
    });
  });

  describe("malformed Authorization headers (fuzz)", () => {
    /** A seeded generator, so a failure replays. */
    function rng(seed: number): () => number {
      let s = seed >>> 0;
      return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = s;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
    }
    const PIECES = ["Bearer", "bearer", "Basic", "BASIC", "Digest", "Negotiate", "Token", "JWT", " ", "  ", "\t", ":", "=", "==", ".", "..", ",", '"', "Bearer ", "Basic ", "é", "ü", "\u00ff", "\u0080", "日本", "🔑", "%00", "\\", "a", "Zm9v", "YWxpY2U6", "static-token-1", "eyJhbGciOiJub25lIn0", "jwt.x.read", "-", "_", "+", "/"];

    it("gives 401 (a CacheError UNAUTHORIZED) for 2000 random headers, never another error", async () => {
      const seed = 4242;
      const next = rng(seed);
      const auth = chain({ oidc: fakeOidc(), allowAnonymous: true });
      for (let i = 0; i < 2000; i++) {
        const n = 1 + Math.floor(next() * 8);
        let h = "";
        for (let j = 0; j < n; j++) h += PIECES[Math.floor(next() * PIECES.length)];
        if (next() < 0.05) h = h.repeat(2000);
        let outcome: unknown;
        try {
          outcome = await auth.authenticate(request(h, next() < 0.5 ? plaintext() : tlsNoCert()));
        } catch (err) {
          outcome = err;
        }
        if (outcome instanceof CacheError) {
          expect(outcome.code, `seed=${seed} i=${i} header=${JSON.stringify(h.slice(0, 80))}`).to.equal("UNAUTHORIZED");
        } else {
          // Only a well-formed credential may resolve: the static token, or the fake OIDC form.
          expect(h, `seed=${seed} i=${i} resolved ${JSON.stringify(outcome)}`).to.match(/static-token-1|jwt\.x\.read/);
        }
      }
    });
  });
});
