// One contract for every PeerTransport: the in-memory transport the simulations use and the
// Connect transport over the real dist listener (HTTP/2 on loopback). A recording endpoint
// answers with fixed data; each call must reach it with exactly what the caller sent and bring
// back exactly what it answered (bytes, 53-bit versions, tombstones, absent records in place),
// receiver errors must arrive with their code, and an unreachable peer is UNAVAILABLE.
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { CacheError } from "../../src/core/errors.js";
import { ConnectPeerTransport, createPeerHandler, createPeerServer, type PeerServer } from "../../src/peer/index.js";
import type { VersionedRecord } from "../../src/store/index.js";
import { InMemoryNetwork, type ForwardRequest, type LeaseOutcome, type PeerEndpoint, type PeerMember, type PeerRef, type PeerTransport, type RecordMeta, type TouchPush } from "../../src/transport/index.js";

const TOKEN = "contract-peer-token";
/** Every byte value once: values are byte strings and must survive the wire unchanged. */
const ALL_BYTES = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join("");
const VERSION_MAX = Number.MAX_SAFE_INTEGER - 1;

const value: VersionedRecord = { key: "k/ü", value: ALL_BYTES, version: VERSION_MAX, origin: "n1", lastUpdatedMs: Math.floor(VERSION_MAX / 1000), expiresAtMs: 1_900_000_000_000, tombstone: false };
const tomb: VersionedRecord = { key: "gone", value: "", version: 1_767_225_600_000_001, origin: "n-2.b_c", lastUpdatedMs: 1_767_225_600_000, expiresAtMs: 0, tombstone: true };
const member: PeerMember = { id: "n3", address: "127.0.0.1:7999", state: "suspect", incarnation: 7, lastSeenMs: 1_767_225_600_123, apiUrl: "http://127.0.0.1:8080", mgmtUrl: "https://n3.example:8081", draining: true };

const liveMeta: RecordMeta = { key: value.key, state: "live", version: VERSION_MAX, origin: "n1", expiresAtMs: value.expiresAtMs, lastUpdatedMs: value.lastUpdatedMs, valueBytes: 256 };
const tombMeta: RecordMeta = { key: tomb.key, state: "tombstone", version: tomb.version, origin: tomb.origin, expiresAtMs: 0, lastUpdatedMs: tomb.lastUpdatedMs, valueBytes: 0 };
const ABSENT_META: RecordMeta = { key: "", state: "absent", version: 0, origin: "", expiresAtMs: 0, lastUpdatedMs: 0, valueBytes: 0 };

/** An endpoint that records each call and answers with fixed data. */
function recordingEndpoint() {
  const calls: Array<{ method: string; args: unknown[] }> = [];
  const rec = (method: string, ...args: unknown[]) => calls.push({ method, args });
  let fail: CacheError | undefined;
  const maybeFail = () => {
    if (fail) throw fail;
  };
  // A receiver whose copies abstain (quorum-vote.ts) marks what it applied.
  let abstaining = false;
  const voted = <T extends { kind: string }>(outcomes: T[]): T[] => (abstaining ? outcomes.map((o) => (o.kind === "applied" ? { ...o, abstains: true } : o)) : outcomes);
  const endpoint: PeerEndpoint = {
    forward: async (req) => {
      rec("forward", req);
      maybeFail();
      return req.writes.map((w, i) => ({ key: w.key, applied: i === 0, bytes: w.value.length, owners: ["n1", "n2"], version: VERSION_MAX - i, origin: "n1", errorCode: i === 0 ? "" : "DRAINING", errorMessage: i === 0 ? "" : "node is draining", expiresAtMs: w.ttlMs > 0 ? 1_900_000_000_000 : 0, ...(i === 0 ? { senderCounted: true } : {}) }));
    },
    applySet: (from, records, checks) => {
      rec("applySet", from, records, ...(checks ? [checks] : []));
      maybeFail();
      return voted(records.map((r, i) => ({ kind: (["applied", "stale", "refused"] as const)[i % 3] as "applied", version: i === 1 ? VERSION_MAX : i === 0 ? r.version : 0, origin: i === 1 ? "n9" : i === 0 ? r.origin : "" })));
    },
    applyTouches: (from, touches) => {
      rec("applyTouches", from, touches);
      maybeFail();
      const kinds = ["applied", "stale", "refused", "base-missing"] as const;
      return voted(touches.map((t, i) => {
        const kind = kinds[i % 4] as (typeof kinds)[number];
        return kind === "applied" ? { kind, version: t.version, origin: t.origin } : kind === "stale" ? { kind, version: VERSION_MAX, origin: "n9" } : { kind, version: 0, origin: "" };
      }));
    },
    applyRemove: (from, records, checks) => {
      rec("applyRemove", from, records, ...(checks ? [checks] : []));
      return voted(records.map((r) => ({ kind: "applied" as const, version: r.version, origin: r.origin })));
    },
    getRecords: (keys) => {
      rec("getRecords", keys);
      // The tombstone and "elsewhere" are answered as not counting towards a quorum.
      return keys.map((k) => ({ record: k === value.key ? value : k === tomb.key ? tomb : undefined, counts: k !== tomb.key && k !== "elsewhere" }));
    },
    keysPage: (cursor, limit, q) => {
      rec("keysPage", cursor, limit, q);
      return { keys: ["a", "b/ü"], nextCursor: "next-cursor", truncated: true };
    },
    inspectRecords: (keys) => {
      rec("inspectRecords", keys);
      maybeFail();
      return keys.map((k) => (k === value.key ? liveMeta : k === tomb.key ? tombMeta : { ...ABSENT_META, key: k }));
    },
    health: () => ({ node: "peer", draining: true, incarnation: 9, unixMs: 1_790_000_000_123 }),
    probe: async (target) => ({ target, ok: false, error: "unreachable" }),
    gossip: (from, members) => {
      rec("gossip", from, members);
      return [member, { ...member, id: "n4", state: "alive", incarnation: 0, apiUrl: "", mgmtUrl: "" }];
    },
    merkleRoot: async (requester, leafCount, pulledThroughMs) => {
      rec("merkleRoot", requester, leafCount, pulledThroughMs);
      return { root: "ab".repeat(32), leafCount, recordCount: 12, asOfMs: 1_790_000_000_456 };
    },
    merkleLeaves: async (requester, leafCount) => Array.from({ length: leafCount }, (_, i) => i.toString(16).padStart(16, "0")),
    merkleRange: async (requester, leafCount, leaves, cursor) => {
      rec("merkleRange", requester, leafCount, leaves, cursor);
      return { records: [value, tomb], nextCursor: "" };
    },
    drain: () => void rec("drain"),
    acceptHandOff: (from, target, records) => {
      rec("acceptHandOff", from, target, records);
      maybeFail();
      return records.map((_, i) => i === 0);
    },
    lease: async (req) => {
      rec("lease", req);
      maybeFail();
      // The key names the outcome to answer: a value, a new lease, another caller's, or none.
      const answers: Record<string, LeaseOutcome> = {
        hit: { kind: "hit", record: { ...value, key: "hit" } },
        granted: { kind: "granted", token: "1.abc" },
        held: { kind: "held", retryAfterMs: 1234 },
      };
      return answers[req.key] ?? { kind: "none" };
    },
    releaseLease: (req) => {
      rec("releaseLease", req);
      maybeFail();
      return req.token === "1.abc";
    },
  };
  return { endpoint, calls, failWith: (e: CacheError | undefined) => (fail = e), abstain: (on: boolean) => (abstaining = on) };
}

interface Harness {
  readonly transport: PeerTransport;
  readonly peer: PeerRef;
  /** A peer address nothing answers at. */
  readonly dead: PeerRef;
  close(): Promise<void>;
}

const IMPLEMENTATIONS: Array<{ name: string; start(endpoint: PeerEndpoint): Promise<Harness> }> = [
  {
    name: "InMemoryTransport",
    async start(endpoint) {
      const network = new InMemoryNetwork();
      network.register("peer.sim:7946", endpoint);
      return { transport: network.transport(), peer: { id: "peer", address: "peer.sim:7946" }, dead: { id: "x", address: "x.sim:7946" }, close: async () => undefined };
    },
  },
  {
    name: "ConnectPeerTransport over the dist listener",
    async start(endpoint) {
      const server: PeerServer = createPeerServer(createPeerHandler(endpoint, { token: TOKEN, mutualTls: false, insecure: false }));
      await new Promise<void>((resolve) => server.server.listen(0, "127.0.0.1", resolve));
      const port = (server.server.address() as AddressInfo).port;
      // A port that was free a moment ago: nothing listens there.
      const closed = createPeerServer(createPeerHandler(endpoint, { token: TOKEN, mutualTls: false, insecure: false }));
      await new Promise<void>((resolve) => closed.server.listen(0, "127.0.0.1", resolve));
      const deadPort = (closed.server.address() as AddressInfo).port;
      await closed.close();
      const transport = new ConnectPeerTransport({ token: TOKEN, compressionThresholdBytes: 0, timeoutMs: 2000 });
      return {
        transport,
        peer: { id: "peer", address: `127.0.0.1:${port}` },
        dead: { id: "x", address: `127.0.0.1:${deadPort}` },
        close: async () => {
          await transport.close();
          await server.close();
        },
      };
    },
  },
];

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(CacheError);
    return (err as CacheError).code;
  }
  throw new Error("expected the call to fail");
}

for (const impl of IMPLEMENTATIONS) {
  describe(`contract: peer transport ${impl.name}`, function () {
    this.timeout(20_000);
    let h: Harness;
    let ep: ReturnType<typeof recordingEndpoint>;

    beforeEach(async () => {
      ep = recordingEndpoint();
      h = await impl.start(ep.endpoint);
    });
    afterEach(() => h.close());

    it("forward: the request arrives as sent (writes, level, sender-applies) and each outcome comes back in order", async () => {
      const req: ForwardRequest = {
        from: "n2",
        consistency: "all",
        senderApplies: true,
        sentAtMs: 1_767_225_600_500,
        writes: [
          { kind: "set", key: "a", value: ALL_BYTES, ttlMs: 60_000, leaseToken: "7.xyz-_~" },
          { kind: "remove", key: "b", value: "", ttlMs: 0 },
          { kind: "set", key: "c", value: "v", ttlMs: 0, condition: { ifMatch: "*" }, sender: { owners: ["n1", "n2"], baseVersion: 0, baseOrigin: "" } },
          { kind: "touch", key: "d", value: "", ttlMs: 5_000, sender: { owners: ["n1", "n2\u00e9"], baseVersion: VERSION_MAX, baseOrigin: "n1" } },
        ],
      };
      const out = await h.transport.forward(h.peer, req);
      expect(ep.calls[0]?.args[0]).to.deep.equal(req);
      expect(out.map((o) => [o.key, o.applied, o.bytes, o.version, o.errorCode, o.expiresAtMs, o.senderCounted])).to.deep.equal([
        ["a", true, 256, VERSION_MAX, "", 1_900_000_000_000, true],
        ["b", false, 0, VERSION_MAX - 1, "DRAINING", 0, undefined],
        ["c", false, 1, VERSION_MAX - 2, "DRAINING", 0, undefined],
        ["d", false, 0, VERSION_MAX - 3, "DRAINING", 1_900_000_000_000, undefined],
      ]);
      expect(out[0]?.owners).to.deep.equal(["n1", "n2"]);
    });

    it("set and remove: records arrive byte for byte with their versions and times, and each outcome comes back in order", async () => {
      const outcomes = await h.transport.set(h.peer, "n1", [value, value, value]);
      expect(outcomes).to.deep.equal([
        { kind: "applied", version: value.version, origin: value.origin },
        { kind: "stale", version: VERSION_MAX, origin: "n9" },
        { kind: "refused", version: 0, origin: "" },
      ]);
      expect(ep.calls[0]).to.deep.equal({ method: "applySet", args: ["n1", [value, value, value]] });
      expect(await h.transport.remove(h.peer, "n1", [tomb])).to.deep.equal([{ kind: "applied", version: tomb.version, origin: tomb.origin }]);
      expect(ep.calls[1]).to.deep.equal({ method: "applyRemove", args: ["n1", [tomb]] });
    });

    it("set and remove with owner checks: each record arrives with its own list (or none), mixed or all alike", async () => {
      const a = ["n1", "n2", "n3"];
      const b = ["n1", "n3", "n2\u00e9"];
      await h.transport.set(h.peer, "n1", [value, value, value, value], [a, undefined, b, a]);
      expect(ep.calls[0]).to.deep.equal({ method: "applySet", args: ["n1", [value, value, value, value], [a, undefined, b, a]] });
      await h.transport.set(h.peer, "n1", [value, value], [b, b]);
      expect(ep.calls[1]).to.deep.equal({ method: "applySet", args: ["n1", [value, value], [b, b]] });
      await h.transport.remove(h.peer, "n1", [tomb, tomb], [undefined, a]);
      expect(ep.calls[2]).to.deep.equal({ method: "applyRemove", args: ["n1", [tomb, tomb], [undefined, a]] });
      await h.transport.set(h.peer, "n1", [value], [undefined]);
      expect(ep.calls[3]?.args.slice(0, 2)).to.deep.equal(["n1", [value]]);
      expect((ep.calls[3]?.args[2] as unknown[] | undefined)?.every((x) => x === undefined) ?? true, "no list: no check").to.equal(true);
    });

    it("a receiver whose copies abstain marks what it applied (no acknowledgement), for entries, deletions and touches; stale and refused stay as they are", async () => {
      ep.abstain(true);
      expect(await h.transport.set(h.peer, "n1", [value, value, value])).to.deep.equal([
        { kind: "applied", version: value.version, origin: value.origin, abstains: true },
        { kind: "stale", version: VERSION_MAX, origin: "n9" },
        { kind: "refused", version: 0, origin: "" },
      ]);
      expect(await h.transport.remove(h.peer, "n1", [tomb])).to.deep.equal([{ kind: "applied", version: tomb.version, origin: tomb.origin, abstains: true }]);
      const t: TouchPush = { key: "k", baseVersion: VERSION_MAX - 5, baseOrigin: "n2", version: VERSION_MAX, origin: "n1", expiresAtMs: 0, lastUpdatedMs: Math.floor(VERSION_MAX / 1000), owners: ["n1"] };
      expect((await h.transport.touch(h.peer, "n1", [t, t]))[0]).to.deep.equal({ kind: "applied", version: VERSION_MAX, origin: "n1", abstains: true });
      ep.abstain(false);
      expect((await h.transport.remove(h.peer, "n1", [tomb]))[0]).to.deep.equal({ kind: "applied", version: tomb.version, origin: tomb.origin });
    });

    it("touch: touches arrive as sent (base, version, expiry, owner list) and each outcome comes back in order, base-missing included", async () => {
      const t: TouchPush = { key: "k/ü", baseVersion: VERSION_MAX - 5, baseOrigin: "n-2.b_c", version: VERSION_MAX, origin: "n1", expiresAtMs: 1_900_000_000_000, lastUpdatedMs: Math.floor(VERSION_MAX / 1000), owners: ["n1", "n2\u00e9", "n3"] };
      const persisted: TouchPush = { ...t, key: "p", expiresAtMs: 0, owners: ["n1"] };
      const outcomes = await h.transport.touch(h.peer, "n1", [t, persisted, t, t]);
      expect(outcomes).to.deep.equal([
        { kind: "applied", version: VERSION_MAX, origin: "n1" },
        { kind: "stale", version: VERSION_MAX, origin: "n9" },
        { kind: "refused", version: 0, origin: "" },
        { kind: "base-missing", version: 0, origin: "" },
      ]);
      expect(ep.calls[0]).to.deep.equal({ method: "applyTouches", args: ["n1", [t, persisted, t, t]] });
      ep.failWith(new CacheError("BAD_REQUEST", "a pushed touch names an invalid base"));
      expect(await codeOf(h.transport.touch(h.peer, "n1", [t]))).to.equal("BAD_REQUEST");
    });

    it("get: records come back in key order, tombstones as tombstones and absent keys as undefined in place, each with whether it counts towards a quorum", async () => {
      const got = await h.transport.get(h.peer, ["missing", value.key, tomb.key, "elsewhere"]);
      expect(got).to.deep.equal([
        { record: undefined, counts: true },
        { record: value, counts: true },
        { record: tomb, counts: false },
        { record: undefined, counts: false },
      ]);
    });

    it("keys, health, probe, gossip, Merkle and drain round-trip their fields", async () => {
      expect(await h.transport.keys(h.peer, "c1", 50, "user:*")).to.deep.equal({ keys: ["a", "b/ü"], nextCursor: "next-cursor", truncated: true });
      expect(ep.calls.at(-1)).to.deep.equal({ method: "keysPage", args: ["c1", 50, "user:*"] });
      expect(await h.transport.health(h.peer)).to.deep.equal({ node: "peer", draining: true, incarnation: 9, unixMs: 1_790_000_000_123 });
      expect(await h.transport.probe(h.peer, "n3")).to.deep.equal({ target: "n3", ok: false, error: "unreachable" });
      const members = await h.transport.gossip(h.peer, "n1", [member]);
      expect(members).to.deep.equal([member, { ...member, id: "n4", state: "alive", incarnation: 0, apiUrl: "", mgmtUrl: "" }]);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "gossip", args: ["n1", [member]] });
      expect(await h.transport.merkleRoot(h.peer, "n1", 4, 1_790_000_000_001)).to.deep.equal({ root: "ab".repeat(32), leafCount: 4, recordCount: 12, asOfMs: 1_790_000_000_456 });
      expect(ep.calls.at(-1), "the sync receipt travels").to.deep.equal({ method: "merkleRoot", args: ["n1", 4, 1_790_000_000_001] });
      expect(await h.transport.merkleLeaves(h.peer, "n1", 2)).to.deep.equal(["0000000000000000", "0000000000000001"]);
      expect(await h.transport.merkleRange(h.peer, "n1", 4, [1, 3], "")).to.deep.equal({ records: [value, tomb], nextCursor: "" });
      expect(ep.calls.at(-1)).to.deep.equal({ method: "merkleRange", args: ["n1", 4, [1, 3], ""] });
      await h.transport.drain(h.peer);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "drain", args: [] });
    });

    it("inspect: each key's record metadata comes back in key order (live, tombstone, absent), with 53-bit versions and sizes", async () => {
      expect(await h.transport.inspect(h.peer, [value.key, "missing", tomb.key])).to.deep.equal([liveMeta, { ...ABSENT_META, key: "missing" }, tombMeta]);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "inspectRecords", args: [[value.key, "missing", tomb.key]] });
      expect(await h.transport.inspect(h.peer, [tomb.key], 1000)).to.deep.equal([tombMeta]);
    });

    it("inspect: a receiver's BAD_REQUEST arrives as BAD_REQUEST; an answer from another node is UNAVAILABLE", async () => {
      expect(await codeOf(h.transport.inspect({ id: "someone-else", address: h.peer.address }, [value.key]))).to.equal("UNAVAILABLE");
      ep.failWith(new CacheError("BAD_REQUEST", "inspect takes 1 to 1000 keys, got 1001"));
      expect(await codeOf(h.transport.inspect(h.peer, [value.key]))).to.equal("BAD_REQUEST");
      expect(await codeOf(h.transport.inspect(h.dead, [value.key]))).to.equal("UNAVAILABLE");
    });

    it("gossip: an answer from another node than the one addressed is UNAVAILABLE, as the list would pass for that member's own word", async () => {
      const before = ep.calls.length;
      expect(await codeOf(h.transport.gossip({ id: "ghost", address: h.peer.address }, "n1", [member]))).to.equal("UNAVAILABLE");
      expect(ep.calls.slice(before), "the receiver still took the push").to.deep.equal([{ method: "gossip", args: ["n1", [member]] }]);
    });

    it("lease carries key, lease and wait, and each outcome (a record byte for byte, a token, a held time, none) comes back as sent", async () => {
      const req = { from: "n2", key: "hit", leaseMs: 10_000, waitMs: 2_000 };
      expect(await h.transport.lease(h.peer, req)).to.deep.equal({ kind: "hit", record: { ...value, key: "hit" } });
      expect(ep.calls.at(-1)).to.deep.equal({ method: "lease", args: [req] });
      expect(await h.transport.lease(h.peer, { ...req, key: "granted" })).to.deep.equal({ kind: "granted", token: "1.abc" });
      expect(await h.transport.lease(h.peer, { ...req, key: "held" })).to.deep.equal({ kind: "held", retryAfterMs: 1234 });
      expect(await h.transport.lease(h.peer, { ...req, key: "other" })).to.deep.equal({ kind: "none" });
      ep.failWith(new CacheError("BAD_REQUEST", "lease out of range"));
      expect(await codeOf(h.transport.lease(h.peer, req))).to.equal("BAD_REQUEST");
    });

    it("releaseLease carries key, token and sender, and the receiver's verdict comes back as sent", async () => {
      const req = { from: "n2", key: "k/ü", token: "1.abc" };
      expect(await h.transport.releaseLease(h.peer, req)).to.equal(true);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "releaseLease", args: [req] });
      expect(await h.transport.releaseLease(h.peer, { ...req, token: "2.def" })).to.equal(false);
      ep.failWith(new CacheError("BAD_REQUEST", "token too long"));
      expect(await codeOf(h.transport.releaseLease(h.peer, req))).to.equal("BAD_REQUEST");
    });

    it("handOffHints carries the target and the records (values and tombstones) and answers one flag per record", async () => {
      const target = { id: "n7", address: "127.0.0.1:7977" };
      expect(await h.transport.handOffHints(h.peer, "n1", target, [value, tomb])).to.deep.equal([true, false]);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "acceptHandOff", args: ["n1", target, [value, tomb]] });
    });

    it("a left member's own claim round-trips its left flag", async () => {
      const leaving: PeerMember = { ...member, id: "n5", state: "alive", left: true };
      await h.transport.gossip(h.peer, "n5", [leaving]);
      expect(ep.calls.at(-1)).to.deep.equal({ method: "gossip", args: ["n5", [leaving]] });
    });

    it("a receiver's error arrives with its code (BAD_REQUEST stays BAD_REQUEST, DRAINING stays DRAINING)", async () => {
      ep.failWith(new CacheError("BAD_REQUEST", "a pushed record has an invalid version 0"));
      expect(await codeOf(h.transport.set(h.peer, "n1", [value]))).to.equal("BAD_REQUEST");
      ep.failWith(new CacheError("DRAINING", "node is draining"));
      expect(await codeOf(h.transport.forward(h.peer, { from: "n2", consistency: undefined, writes: [{ kind: "set", key: "a", value: "v", ttlMs: 0 }] }))).to.equal("DRAINING");
    });

    it("an answer from another node than the one addressed counts for nothing: set, remove and forward are UNAVAILABLE", async () => {
      const impostor = { id: "someone-else", address: h.peer.address };
      expect(await codeOf(h.transport.set(impostor, "n1", [value]))).to.equal("UNAVAILABLE");
      expect(await codeOf(h.transport.remove(impostor, "n1", [tomb]))).to.equal("UNAVAILABLE");
      expect(await codeOf(h.transport.forward(impostor, { from: "n2", consistency: "quorum", writes: [{ kind: "set", key: "a", value: "v", ttlMs: 0 }] }))).to.equal("UNAVAILABLE");
    });

    it("a peer nothing answers at is UNAVAILABLE", async () => {
      expect(await codeOf(h.transport.health(h.dead))).to.equal("UNAVAILABLE");
      expect(await codeOf(h.transport.set(h.dead, "n1", [value]))).to.equal("UNAVAILABLE");
    });
  });
}
