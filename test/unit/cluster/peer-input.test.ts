// Checks on what peers send (dist/peer-input.ts), at their boundaries: a pushed record's key (at
// most KEY_BYTES_CEILING bytes of well-formed UTF-8), origin (a node id), version (a positive safe
// integer at most PEER_VERSION_AHEAD_MAX_MS ahead of this node's clock), last-updated time and
// expiry (0..TIME_MS_MAX); a forwarded write's key and ttl (0..MAX_DURATION_MS). Every refusal is
// a 400 BAD_REQUEST CacheError naming what was wrong.
import { expect } from "chai";
import { MAX_DURATION_MS } from "../../../src/core/duration.js";
import { CacheError } from "../../../src/core/errors.js";
import { ETAG_LIMITS, KEY_BYTES_CEILING, PEER_VERSION_AHEAD_MAX_MS, TIME_MS_MAX } from "../../../src/core/limits.js";
import { checkForwardedWrite, checkPeerRecord, peerRecordProblem, versionTooFarAhead } from "../../../src/cluster/peer-input.js";
import type { VersionedRecord } from "../../../src/store/index.js";
import type { ClientWrite } from "../../../src/transport/index.js";

/** This node's clock: 2026-01-01T00:00:00Z. */
const NOW = Date.UTC(2026, 0, 1);
/** A version stamped one minute before NOW (hybrid clock: wall ms x 1000 + counter). */
const VERSION = (NOW - 60_000) * 1000 + 3;

function rec(extra: Partial<VersionedRecord> = {}): VersionedRecord {
  return { key: "k", value: "v", version: VERSION, origin: "n2", lastUpdatedMs: NOW - 60_000, expiresAtMs: 0, tombstone: false, ...extra };
}

function write(extra: Partial<ClientWrite> = {}): ClientWrite {
  return { kind: "set", key: "k", value: "v", ttlMs: 0, ...extra };
}

/** Runs `fn` and returns the 400 it throws (fails the test when it does not throw one). */
function refusal(fn: () => void): CacheError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CacheError);
    const e = err as CacheError;
    expect(e.code, e.message).to.equal("BAD_REQUEST");
    expect(e.status).to.equal(400);
    return e;
  }
  expect.fail("expected a 400 BAD_REQUEST, but the input was accepted");
}

describe("dist/peer-input", () => {
  it("the limits are the documented ones: 65536-byte keys, 24 h ahead, the largest Date, ~292 years of ttl", () => {
    expect(KEY_BYTES_CEILING).to.equal(65_536);
    expect(PEER_VERSION_AHEAD_MAX_MS).to.equal(24 * 3_600_000);
    expect(TIME_MS_MAX).to.equal(8_640_000_000_000_000);
    expect(MAX_DURATION_MS).to.equal(9_223_372_036_854);
  });

  describe("checkPeerRecord", () => {
    it("accepts an ordinary record, a tombstone and a record with an expiry", () => {
      expect(() => checkPeerRecord(rec(), NOW)).to.not.throw();
      expect(() => checkPeerRecord(rec({ value: "", tombstone: true }), NOW)).to.not.throw();
      expect(() => checkPeerRecord(rec({ expiresAtMs: NOW + 3_600_000 }), NOW)).to.not.throw();
    });

    describe("key", () => {
      const accepted: Array<[string, string]> = [
        ["one character", "k"],
        [`${KEY_BYTES_CEILING} ASCII bytes`, "k".repeat(KEY_BYTES_CEILING)],
        [`${KEY_BYTES_CEILING} bytes of 2-byte characters`, "é".repeat(KEY_BYTES_CEILING / 2)],
        [`${KEY_BYTES_CEILING - 1} bytes of 3-byte characters`, "€".repeat((KEY_BYTES_CEILING - 1) / 3)],
        [`${KEY_BYTES_CEILING} bytes of 4-byte characters`, "😀".repeat(KEY_BYTES_CEILING / 4)],
      ];
      for (const [what, key] of accepted) {
        it(`accepts a key of ${what}`, () => {
          expect(() => checkPeerRecord(rec({ key }), NOW)).to.not.throw();
        });
      }

      const refused: Array<[string, unknown, RegExp]> = [
        ["an empty key", "", /key must not be empty/],
        [`${KEY_BYTES_CEILING + 1} ASCII bytes`, "k".repeat(KEY_BYTES_CEILING + 1), /longer than 65536 bytes/],
        [`${KEY_BYTES_CEILING + 1} bytes (2-byte characters and one ASCII)`, `${"é".repeat(KEY_BYTES_CEILING / 2)}a`, /longer than 65536 bytes/],
        [`${KEY_BYTES_CEILING + 2} bytes of 3-byte characters`, "€".repeat((KEY_BYTES_CEILING - 1) / 3 + 1), /longer than 65536 bytes/],
        ["a lone surrogate", "a\uD800b", /not well-formed Unicode/],
        ["a number", 42, /must be a string/],
      ];
      for (const [what, key, message] of refused) {
        it(`refuses ${what} with a 400 naming a pushed record's key`, () => {
          const e = refusal(() => checkPeerRecord(rec({ key: key as string }), NOW));
          expect(e.message).to.match(/^a pushed record's key/).and.match(message);
        });
      }

      it("refuses an over-long key with details.max_key_bytes = 65536", () => {
        const e = refusal(() => checkPeerRecord(rec({ key: "k".repeat(KEY_BYTES_CEILING + 1) }), NOW));
        expect(e.details).to.deep.equal({ max_key_bytes: KEY_BYTES_CEILING });
      });
    });

    describe("origin", () => {
      for (const origin of ["n1", "a", "node-1.example_2", "x".repeat(128)]) {
        it(`accepts origin ${JSON.stringify(origin.length > 20 ? `${origin.slice(0, 8)}… (${origin.length} chars)` : origin)}`, () => {
          expect(() => checkPeerRecord(rec({ origin }), NOW)).to.not.throw();
        });
      }
      for (const origin of ["", "x".repeat(129), "a b", "节点", "x/y", "n1\n", "n1:7946"]) {
        it(`refuses origin ${JSON.stringify(origin.length > 20 ? `${origin.slice(0, 8)}… (${origin.length} chars)` : origin)} with a 400 naming the origin`, () => {
          const e = refusal(() => checkPeerRecord(rec({ origin }), NOW));
          expect(e.message).to.equal(`a pushed record has an invalid origin ${JSON.stringify(origin.slice(0, 64))}`);
        });
      }
    });

    describe("version", () => {
      it("accepts version 1 (far in the past) and a version exactly 24 h ahead of the clock", () => {
        expect(() => checkPeerRecord(rec({ version: 1 }), NOW)).to.not.throw();
        expect(() => checkPeerRecord(rec({ version: (NOW + PEER_VERSION_AHEAD_MAX_MS) * 1000 }), NOW)).to.not.throw();
      });

      it("refuses a version 24 h + 1 ms ahead of the clock, with the key in details and the skew in the message", () => {
        const version = (NOW + PEER_VERSION_AHEAD_MAX_MS + 1) * 1000;
        const e = refusal(() => checkPeerRecord(rec({ key: "skewed", version }), NOW));
        expect(e.message).to.match(new RegExp(`^a pushed record's version ${version} is 86400 s ahead of this node's clock \\(at most 86400 s\\)$`));
        expect(e.details).to.deep.equal({ key: "skewed" });
      });

      it("refuses a version a year ahead of the clock", () => {
        const e = refusal(() => checkPeerRecord(rec({ version: (NOW + 365 * 86_400_000) * 1000 }), NOW));
        expect(e.message).to.match(/is 31536000 s ahead of this node's clock/);
      });

      it("measures the 24 h from the clock it is given: the same version passes one day later", () => {
        const version = (NOW + 2 * PEER_VERSION_AHEAD_MAX_MS) * 1000;
        refusal(() => checkPeerRecord(rec({ version }), NOW));
        expect(() => checkPeerRecord(rec({ version }), NOW + PEER_VERSION_AHEAD_MAX_MS)).to.not.throw();
      });

      for (const version of [0, -1, -VERSION, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
        it(`refuses version ${version} as invalid`, () => {
          const e = refusal(() => checkPeerRecord(rec({ version }), NOW + 1e12 /* far future: only the version's form is at issue */));
          expect(e.message).to.equal(`a pushed record has an invalid version ${version}`);
        });
      }
    });

    for (const [field, label] of [
      ["lastUpdatedMs", "last-updated time"],
      ["expiresAtMs", "expiry"],
    ] as const) {
      describe(field, () => {
        for (const ms of [0, 1, NOW, TIME_MS_MAX]) {
          it(`accepts ${ms}`, () => {
            expect(() => checkPeerRecord(rec({ [field]: ms }), NOW)).to.not.throw();
          });
        }
        for (const ms of [-1, TIME_MS_MAX + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER]) {
          it(`refuses ${ms} with a 400 naming the ${label}`, () => {
            const e = refusal(() => checkPeerRecord(rec({ [field]: ms }), NOW));
            expect(e.message).to.equal(`a pushed record has an invalid ${label} ${ms}`);
          });
        }
      });
    }
  });

  describe("checkForwardedWrite", () => {
    it("accepts a set without ttl, a remove, and a key of exactly 65536 bytes", () => {
      expect(() => checkForwardedWrite(write())).to.not.throw();
      expect(() => checkForwardedWrite(write({ kind: "remove", value: "" }))).to.not.throw();
      expect(() => checkForwardedWrite(write({ key: "k".repeat(KEY_BYTES_CEILING) }))).to.not.throw();
    });

    for (const [what, key, message] of [
      ["an empty key", "", /must not be empty/],
      [`a key of ${KEY_BYTES_CEILING + 1} bytes`, "k".repeat(KEY_BYTES_CEILING + 1), /longer than 65536 bytes/],
      ["a lone surrogate", "\uDC00", /not well-formed Unicode/],
    ] as const) {
      it(`refuses ${what} with a 400 naming a forwarded write's key`, () => {
        const e = refusal(() => checkForwardedWrite(write({ key })));
        expect(e.message).to.match(/^a forwarded write's key/).and.match(message);
      });
    }

    for (const ttlMs of [0, 1, 3_600_000, MAX_DURATION_MS]) {
      it(`accepts ttl ${ttlMs} ms`, () => {
        expect(() => checkForwardedWrite(write({ ttlMs }))).to.not.throw();
      });
    }

    for (const ttlMs of [MAX_DURATION_MS + 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      it(`refuses ttl ${ttlMs} ms as out of range`, () => {
        const e = refusal(() => checkForwardedWrite(write({ ttlMs })));
        expect(e.message).to.equal(`a forwarded write's ttl ${ttlMs} ms is out of range (0 to ${MAX_DURATION_MS})`);
      });
    }

    const tags = (n: number, chars = 8) => Array.from({ length: n }, (_, i) => `"${String(i).padStart(chars - 2, "0")}"`);

    it(`accepts a forwarded If-Match of * and of exactly ${ETAG_LIMITS.tagsMax} entity tags`, () => {
      expect(() => checkForwardedWrite(write({ condition: { ifMatch: "*" } }))).to.not.throw();
      expect(() => checkForwardedWrite(write({ condition: { ifMatch: tags(ETAG_LIMITS.tagsMax) } }))).to.not.throw();
      expect(() => checkForwardedWrite(write({ condition: { ifNoneMatch: "*" } }))).to.not.throw();
    });

    it(`refuses a forwarded If-Match of ${ETAG_LIMITS.tagsMax + 1} entity tags (the client limit) with a 400`, () => {
      const e = refusal(() => checkForwardedWrite(write({ condition: { ifMatch: tags(ETAG_LIMITS.tagsMax + 1) } })));
      expect(e.message).to.match(/^a forwarded write's If-Match lists more than 64 entity tags/);
    });

    it(`refuses a forwarded If-Match longer than ${ETAG_LIMITS.headerCharsMax} characters in all with a 400`, () => {
      const e = refusal(() => checkForwardedWrite(write({ condition: { ifMatch: tags(2, ETAG_LIMITS.headerCharsMax) } })));
      expect(e.message).to.match(/^a forwarded write's If-Match is longer than 8192 characters/);
    });

    it("refuses a forwarder's view of the key with more owners than the replication ceiling, or without any, with a 400", () => {
      const view = (owners: string[]) => write({ condition: { ifMatch: "*" }, sender: { owners, baseVersion: 0, baseOrigin: "" } });
      expect(() => checkForwardedWrite(view(["n1", "n2"]))).to.not.throw();
      for (const owners of [[], Array.from({ length: 65 }, (_, i) => `n${i}`)]) {
        expect(refusal(() => checkForwardedWrite(view(owners))).message).to.match(/^a forwarded write's owner list holds/);
      }
    });
  });
  describe("versionTooFarAhead and peerRecordProblem (the checks of pulled records)", () => {
    const limitVersion = (NOW + PEER_VERSION_AHEAD_MAX_MS) * 1000;

    it("versionTooFarAhead is false up to exactly PEER_VERSION_AHEAD_MAX_MS ahead and true past it", () => {
      expect(versionTooFarAhead(NOW * 1000, NOW)).to.equal(false);
      expect(versionTooFarAhead(limitVersion, NOW)).to.equal(false);
      expect(versionTooFarAhead(limitVersion + 1000, NOW)).to.equal(true);
    });

    it("peerRecordProblem returns the 400 checkPeerRecord would throw, and undefined for a good record", () => {
      const good = { key: "k", value: "v", version: NOW * 1000, origin: "n2", lastUpdatedMs: NOW, expiresAtMs: 0, tombstone: false };
      expect(peerRecordProblem(good, NOW)).to.equal(undefined);
      const ahead = { ...good, version: limitVersion + 1000 };
      const problem = peerRecordProblem(ahead, NOW);
      expect(problem).to.be.instanceOf(CacheError);
      expect(problem?.code).to.equal("BAD_REQUEST");
      expect(() => checkPeerRecord(ahead, NOW)).to.throw(CacheError, problem?.message);
    });
  });
});
