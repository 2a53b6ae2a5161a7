import { expect } from "chai";
import { loadConfig } from "../../../src/config/load-config.js";
import { SettingError } from "../../../src/config/parsers.js";
import { SETTINGS } from "../../../src/config/settings.js";
import type { Config } from "../../../src/config/config.js";

const DEFAULTS = { hostname: "host-a" };
const MiB = 1024 * 1024;

const load = (env: Record<string, string | undefined> = {}): Config => loadConfig(env, DEFAULTS);

/** Loads `env` and expects a SettingError naming `variable` at the start of its message. */
function expectSettingError(env: Record<string, string>, variable: string, contains?: string | RegExp): SettingError {
  let caught: unknown;
  try {
    load(env);
  } catch (err) {
    caught = err;
  }
  expect(caught, `${JSON.stringify(env)} should throw`).to.be.instanceOf(SettingError);
  const e = caught as SettingError;
  expect(e.name).to.equal("SettingError");
  expect(e.variable).to.equal(variable);
  expect(e.message.startsWith(`${variable}: `), e.message).to.equal(true);
  if (typeof contains === "string") expect(e.message).to.include(contains);
  else if (contains) expect(e.message).to.match(contains);
  return e;
}

describe("config/load-config", () => {
  describe("defaults", () => {
    const c = load();
    const expected: Array<[keyof Config, unknown]> = [
      ["nodeId", "host-a"],
      ["apiAddr", { host: "", port: 8080 }],
      ["mgmtAddr", { host: "", port: 8081 }],
      ["distAddr", { host: "", port: 7946 }],
      ["seeds", []],
      ["replication", 3],
      ["capacity", 100_000],
      ["logLevel", "info"],
      ["heartbeatIntervalMs", 1_000],
      ["indirectProbeK", 2],
      ["deadAfterMs", 6_000],
      ["gossipIntervalMs", 1_000],
      ["hintTtlMs", 30_000],
      ["hintReplayMs", 200],
      ["hintMaxPerNode", 10_000],
      ["hintMaxBytes", 64 * MiB],
      ["rebalanceIntervalMs", 250],
      ["rebalanceBatchSize", 64],
      ["rebalanceMaxConcurrent", 1],
      ["removalGraceMs", 0],
      ["autoSyncIntervalMs", 30_000],
      ["autoSyncMaxFactor", 8],
      ["merkleChunkSize", 128],
      ["readRepairBatchSize", 0],
      ["readRepairIntervalMs", 100],
      ["writeConsistency", "quorum"],
      ["readConsistency", "one"],
      ["tombstoneTtlMs", 600_000],
      ["evictionAlgorithm", "lru"],
      ["evictionShards", 32],
      ["evictionIntervalMs", 1_000],
      ["expirationIntervalMs", 1_000],
      ["maxValueBytes", 8 * MiB],
      ["maxBodyBytes", 16 * MiB],
      ["maxKeyBytes", 4_096],
      ["maxBatchItems", 1_000],
      ["compressionThresholdBytes", 0],
      ["apiTls", undefined],
      ["mgmtTls", undefined],
      ["distTls", undefined],
      ["authToken", undefined],
      ["authConfigPath", undefined],
      ["authFailLimitPerS", 10],
      ["peerToken", undefined],
      ["oidc", undefined],
      ["unknownVariables", []],
    ];
    for (const [field, value] of expected) {
      it(`${field} defaults to ${JSON.stringify(value)}`, () => {
        expect(c[field]).to.deep.equal(value);
      });
    }

    it("every SETTINGS default parses (an empty environment loads)", () => {
      expect(() => load({})).to.not.throw();
    });

    it("an empty-string variable counts as unset and takes the default", () => {
      const e = load({ SERVICE_REPLICATION: "", SERVICE_HEARTBEAT: "", SERVICE_API_ADDR: "" });
      expect(e.replication).to.equal(3);
      expect(e.heartbeatIntervalMs).to.equal(1_000);
      expect(e.apiAddr).to.deep.equal({ host: "", port: 8080 });
      expect(e.settings.find((s) => s.name === "SERVICE_REPLICATION")?.source).to.equal("default");
    });
  });

  describe("values from the environment", () => {
    it("takes a duration up to the longest timer Node runs, 2^31-1 ms (596h31m23s647ms)", () => {
      expect(load({ SERVICE_EVICTION_INTERVAL: "596h31m23s647ms" }).evictionIntervalMs).to.equal(2 ** 31 - 1);
    });

    it("parses durations, integers, sizes, enums and addresses into typed fields", () => {
      const c = load({
        SERVICE_NODE_ID: "n1",
        SERVICE_API_ADDR: "127.0.0.1:9080",
        SERVICE_MGMT_ADDR: "[::1]:9081",
        SERVICE_DIST_ADDR: ":9946",
        SERVICE_REPLICATION: "5",
        SERVICE_CAPACITY: "2500",
        SERVICE_LOG_LEVEL: "debug",
        SERVICE_HEARTBEAT: "250ms",
        SERVICE_INDIRECT_PROBE_K: "0",
        SERVICE_GOSSIP_INTERVAL: "2s",
        SERVICE_HINT_TTL: "1m30s",
        SERVICE_HINT_REPLAY: "1.5s",
        SERVICE_HINT_MAX_PER_NODE: "7",
        SERVICE_HINT_MAX_BYTES: "1MB",
        SERVICE_REBALANCE_INTERVAL: "1h",
        SERVICE_REMOVAL_GRACE: "0",
        SERVICE_AUTO_SYNC_INTERVAL: "0s",
        SERVICE_AUTO_SYNC_MAX_FACTOR: "1",
        SERVICE_READ_REPAIR_BATCH_SIZE: "16",
        SERVICE_WRITE_CONSISTENCY: "all",
        SERVICE_READ_CONSISTENCY: "QUORUM",
        SERVICE_TOMBSTONE_TTL: "5m",
        SERVICE_EVICTION_ALGORITHM: "cawolfu",
        SERVICE_EVICTION_SHARDS: "8",
        SERVICE_MAX_VALUE_BYTES: "1KiB",
        SERVICE_MAX_BODY_BYTES: "2048",
        SERVICE_MAX_KEY_BYTES: "100",
        SERVICE_MAX_BATCH_ITEMS: "10",
        SERVICE_COMPRESSION_THRESHOLD: "4 KiB",
        SERVICE_AUTH_FAIL_LIMIT: "0",
      });
      expect(c).to.include({
        nodeId: "n1",
        replication: 5,
        capacity: 2500,
        logLevel: "debug",
        heartbeatIntervalMs: 250,
        indirectProbeK: 0,
        gossipIntervalMs: 2_000,
        hintTtlMs: 90_000,
        hintReplayMs: 1_500,
        hintMaxPerNode: 7,
        hintMaxBytes: 1_000_000,
        rebalanceIntervalMs: 3_600_000,
        removalGraceMs: 0,
        autoSyncIntervalMs: 0,
        autoSyncMaxFactor: 1,
        readRepairBatchSize: 16,
        writeConsistency: "all",
        authFailLimitPerS: 0,
        readConsistency: "quorum",
        tombstoneTtlMs: 300_000, tombstoneBytesMax: 64 * 1024 * 1024,
        evictionAlgorithm: "cawolfu",
        evictionShards: 8,
        maxValueBytes: 1024,
        maxBodyBytes: 2048,
        maxKeyBytes: 100,
        maxBatchItems: 10,
        compressionThresholdBytes: 4096,
      });
      expect(c.apiAddr).to.deep.equal({ host: "127.0.0.1", port: 9080 });
      expect(c.mgmtAddr).to.deep.equal({ host: "::1", port: 9081 });
      expect(c.distAddr).to.deep.equal({ host: "", port: 9946 });
    });

    it("deadAfterMs defaults to 6 x the heartbeat interval when unset", () => {
      expect(load({ SERVICE_HEARTBEAT: "2s" }).deadAfterMs).to.equal(12_000);
      expect(load({ SERVICE_HEARTBEAT: "150ms" }).deadAfterMs).to.equal(900);
    });

    it("an explicit SERVICE_DEAD_AFTER wins over the heartbeat-derived default", () => {
      const c = load({ SERVICE_HEARTBEAT: "2s", SERVICE_DEAD_AFTER: "45s" });
      expect(c.deadAfterMs).to.equal(45_000);
    });

    it("SERVICE_MAX_DATA_BYTES defaults to 40% of the process's memory (at least the largest value), shown effective by /config; 0 or a size as given", () => {
      const withMemory = (env: Record<string, string>, memoryBytes: number) => loadConfig(env, { ...DEFAULTS, memoryBytes });
      const c = withMemory({}, 1024 * MiB);
      expect(c.maxDataBytes).to.equal(Math.floor(1024 * MiB * 0.4));
      expect(c.settings.find((s) => s.name === "SERVICE_MAX_DATA_BYTES")).to.deep.equal({ name: "SERVICE_MAX_DATA_BYTES", value: String(Math.floor(1024 * MiB * 0.4)), source: "default" });
      expect(withMemory({}, 10 * MiB).maxDataBytes, "a tiny limit still holds the largest key and value").to.equal(8 * MiB + 4096);
      expect(withMemory({ SERVICE_MAX_DATA_BYTES: "0" }, 1024 * MiB).maxDataBytes).to.equal(0);
      expect(withMemory({ SERVICE_MAX_DATA_BYTES: "256MiB" }, 1024 * MiB).maxDataBytes).to.equal(256 * MiB);
      expect(load().maxDataBytes, "no memory figure: no byte limit").to.equal(0);
      expectSettingError({ SERVICE_MAX_DATA_BYTES: "8MiB" }, "SERVICE_MAX_DATA_BYTES", "at least SERVICE_MAX_VALUE_BYTES + SERVICE_MAX_KEY_BYTES (8392704)");
      expect(load({ SERVICE_MAX_DATA_BYTES: "4MiB", SERVICE_MAX_VALUE_BYTES: "1MiB" }).maxDataBytes).to.equal(4 * MiB);
    });

    it("SERVICE_MAX_INFLIGHT_BYTES defaults to 10% of the process's memory (at least the largest answer; 1 GiB when unknown), shown effective by /config; 0 or a size as given", () => {
      const withMemory = (env: Record<string, string>, memoryBytes: number) => loadConfig(env, { ...DEFAULTS, memoryBytes });
      const largest = Math.ceil((16 * MiB) / 3) * 4 + MiB;
      const c = withMemory({}, 1024 * MiB);
      expect(c.maxInflightBytes).to.equal(Math.floor(1024 * MiB * 0.1));
      expect(c.settings.find((s) => s.name === "SERVICE_MAX_INFLIGHT_BYTES")).to.deep.equal({ name: "SERVICE_MAX_INFLIGHT_BYTES", value: String(Math.floor(1024 * MiB * 0.1)), source: "default" });
      expect(withMemory({}, 64 * MiB).maxInflightBytes, "a small limit still takes the largest answer").to.equal(largest);
      expect(load().maxInflightBytes, "no memory figure").to.equal(1024 * MiB);
      expect(withMemory({ SERVICE_MAX_INFLIGHT_BYTES: "0" }, 1024 * MiB).maxInflightBytes).to.equal(0);
      expect(withMemory({ SERVICE_MAX_INFLIGHT_BYTES: "200MiB" }, 1024 * MiB).maxInflightBytes).to.equal(200 * MiB);
      expectSettingError({ SERVICE_MAX_INFLIGHT_BYTES: "16MiB" }, "SERVICE_MAX_INFLIGHT_BYTES", `(${largest})`);
      expect(load({ SERVICE_MAX_INFLIGHT_BYTES: "4MiB", SERVICE_MAX_VALUE_BYTES: "1MiB", SERVICE_MAX_BODY_BYTES: "1MiB" }).maxInflightBytes).to.equal(4 * MiB);
    });

    it("trims whitespace around numeric, duration and enum values", () => {
      const c = load({ SERVICE_REPLICATION: " 4 ", SERVICE_HEARTBEAT: " 3s ", SERVICE_LOG_LEVEL: " WARN " });
      expect(c.replication).to.equal(4);
      expect(c.heartbeatIntervalMs).to.equal(3_000);
      expect(c.logLevel).to.equal("warn");
    });

    it("accepts the boundary values of ranges", () => {
      expect(load({ SERVICE_REPLICATION: "1" }).replication).to.equal(1);
      expect(load({ SERVICE_REPLICATION: "64" }).replication).to.equal(64);
      expect(load({ SERVICE_INDIRECT_PROBE_K: "16" }).indirectProbeK).to.equal(16);
      expect(load({ SERVICE_MAX_VALUE_BYTES: "15MiB" }).maxValueBytes).to.equal(15 * MiB);
      expect(load({ SERVICE_EVICTION_SHARDS: "1024" }).evictionShards).to.equal(1024);
    });

    it("raises the store shard count to one per 65,536 items of capacity (a shard compacts its pages in one write) and shows the count in use", () => {
      const shards = (env: Record<string, string>) => {
        const c = load(env);
        return { shards: c.evictionShards, shown: c.settings.find((s) => s.name === "SERVICE_EVICTION_SHARDS")?.value };
      };
      expect(shards({ SERVICE_CAPACITY: "1000000" }), "the default is enough").to.deep.equal({ shards: 32, shown: "32" });
      expect(shards({ SERVICE_CAPACITY: "1000000", SERVICE_EVICTION_SHARDS: "1" })).to.deep.equal({ shards: 16, shown: "16" });
      expect(shards({ SERVICE_CAPACITY: "10000000" })).to.deep.equal({ shards: 153, shown: "153" });
      expect(shards({ SERVICE_CAPACITY: "65536", SERVICE_EVICTION_SHARDS: "1" }), "exactly one shard's worth").to.deep.equal({ shards: 1, shown: "1" });
      expect(shards({ SERVICE_CAPACITY: "65537", SERVICE_EVICTION_SHARDS: "1" })).to.deep.equal({ shards: 2, shown: "2" });
      expect(shards({ SERVICE_CAPACITY: "1000000000" }), "at most 1024").to.deep.equal({ shards: 1024, shown: "1024" });
    });

    it("reads the OIDC settings with their claim defaults", () => {
      const c = load({ SERVICE_OIDC_ISSUER: "https://idp.example.com/", SERVICE_OIDC_AUDIENCE: "cache" });
      expect(c.oidc).to.deep.equal({ issuer: "https://idp.example.com/", audience: "cache", identityClaim: "sub", scopeClaim: "scope" });
    });

    it("accepts an http:// OIDC issuer (loopback tests) and custom claims", () => {
      const c = load({
        SERVICE_OIDC_ISSUER: "http://127.0.0.1:5556",
        SERVICE_OIDC_AUDIENCE: "aud",
        SERVICE_OIDC_IDENTITY_CLAIM: "email",
        SERVICE_OIDC_SCOPE_CLAIM: "scp",
      });
      expect(c.oidc).to.include({ issuer: "http://127.0.0.1:5556", identityClaim: "email", scopeClaim: "scp" });
    });

    it("reads TLS files per listener, with the optional CA", () => {
      const c = load({
        SERVICE_API_TLS_CERT: "/tls/api.crt",
        SERVICE_API_TLS_KEY: "/tls/api.key",
        SERVICE_API_TLS_CLIENT_CA: "/tls/ca.pem",
        SERVICE_MGMT_TLS_CERT: "/tls/m.crt",
        SERVICE_MGMT_TLS_KEY: "/tls/m.key",
      });
      expect(c.apiTls).to.deep.equal({ certFile: "/tls/api.crt", keyFile: "/tls/api.key", caFile: "/tls/ca.pem" });
      expect(c.mgmtTls).to.deep.equal({ certFile: "/tls/m.crt", keyFile: "/tls/m.key", caFile: undefined });
      expect(c.distTls).to.equal(undefined);
    });

    it("reads the auth token and policy path", () => {
      const c = load({ SERVICE_AUTH_TOKEN: "s3cret", SERVICE_AUTH_CONFIG: "/etc/auth.yaml" });
      expect(c.authToken).to.equal("s3cret");
      expect(c.authConfigPath).to.equal("/etc/auth.yaml");
    });
  });

  describe("node id", () => {
    it("falls back to the hostname given in the defaults", () => {
      expect(loadConfig({}, { hostname: "box-17" }).nodeId).to.equal("box-17");
    });

    it("falls back to the hostname when SERVICE_NODE_ID is blank", () => {
      expect(loadConfig({ SERVICE_NODE_ID: "   " }, { hostname: "box-17" }).nodeId).to.equal("box-17");
    });

    it("prefers SERVICE_NODE_ID over the hostname, trimmed", () => {
      expect(loadConfig({ SERVICE_NODE_ID: " n7 " }, { hostname: "box-17" }).nodeId).to.equal("n7");
    });

    for (const bad of ["a b", "a,b", "a@b", "a\tb"]) {
      it(`rejects the node id ${JSON.stringify(bad)} with SERVICE_NODE_ID`, () => {
        expectSettingError({ SERVICE_NODE_ID: bad }, "SERVICE_NODE_ID");
      });
    }

    it("rejects an empty node id when the hostname is empty too", () => {
      let caught: unknown;
      try {
        loadConfig({}, { hostname: "" });
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(SettingError);
      expect((caught as SettingError).message).to.match(/^SERVICE_NODE_ID: /);
    });
  });

  describe("bad values throw SettingError naming the variable", () => {
    const cases: Array<[string, string, string]> = [
      // durations
      ["SERVICE_HEARTBEAT", "5", "duration without unit"],
      ["SERVICE_HEARTBEAT", "-1s", "negative duration"],
      ["SERVICE_HEARTBEAT", "1d", "unknown unit"],
      ["SERVICE_HEARTBEAT", "fast", "not a duration"],
      ["SERVICE_HEARTBEAT", "0s", "zero heartbeat (minimum 1ms)"],
      ["SERVICE_HEARTBEAT", "0", "bare zero heartbeat"],
      ["SERVICE_HEARTBEAT", "1S", "upper-case unit"],
      // Node runs a timer of more than 2^31-1 ms after 1 ms: a heartbeat of 1200h spun the node.
      ["SERVICE_HEARTBEAT", "1200h", "longer than a Node timer (2^31-1 ms)"],
      ["SERVICE_EVICTION_INTERVAL", "596h31m23s648ms", "one ms longer than a Node timer"],
      ["SERVICE_REMOVAL_GRACE", "1000h", "longer than a Node timer"],
      ["SERVICE_TLS_RELOAD_INTERVAL", "30000h", "longer than a Node timer"],
      ["SERVICE_HINT_TTL", "30", "duration without unit"],
      ["SERVICE_HINT_REPLAY", "0ms", "zero replay tick"],
      ["SERVICE_REBALANCE_INTERVAL", "abc", "not a duration"],
      ["SERVICE_DEAD_AFTER", "1x", "unknown unit"],
      ["SERVICE_GOSSIP_INTERVAL", "1 s", "space inside"],
      ["SERVICE_TOMBSTONE_TTL", "10", "duration without unit"],
      ["SERVICE_REMOVAL_GRACE", "-5s", "negative grace"],
      ["SERVICE_AUTO_SYNC_INTERVAL", "never", "not a duration"],
      ["SERVICE_READ_REPAIR_INTERVAL", "0s", "zero interval"],
      ["SERVICE_EVICTION_INTERVAL", "1e3ms", "exponent"],
      ["SERVICE_EXPIRATION_INTERVAL", "99999999999999999h", "overflow"],
      // integers
      ["SERVICE_REPLICATION", "three", "not an integer"],
      ["SERVICE_REPLICATION", "1.5", "fraction"],
      ["SERVICE_REPLICATION", "3x", "trailing garbage"],
      ["SERVICE_REPLICATION", "0", "below 1"],
      ["SERVICE_REPLICATION", "-1", "negative"],
      ["SERVICE_REPLICATION", "65", "above 64"],
      ["SERVICE_CAPACITY", "0", "below 1"],
      ["SERVICE_CAPACITY", "99999999999999999999", "not a safe integer"],
      ["SERVICE_CAPACITY", "1e5", "exponent"],
      ["SERVICE_INDIRECT_PROBE_K", "17", "above 16"],
      ["SERVICE_INDIRECT_PROBE_K", "-1", "negative"],
      ["SERVICE_HINT_MAX_PER_NODE", "0", "below 1"],
      ["SERVICE_REBALANCE_BATCH_SIZE", "0", "below 1"],
      ["SERVICE_REBALANCE_BATCH_SIZE", "10001", "above 10000"],
      ["SERVICE_REBALANCE_MAX_CONCURRENT", "65", "above 64"],
      ["SERVICE_AUTO_SYNC_MAX_FACTOR", "0", "below 1"],
      ["SERVICE_AUTO_SYNC_MAX_FACTOR", "1025", "above 1024"],
      ["SERVICE_MERKLE_CHUNK_SIZE", "0", "below 1"],
      ["SERVICE_READ_REPAIR_BATCH_SIZE", "-1", "negative"],
      ["SERVICE_EVICTION_SHARDS", "0", "below 1"],
      ["SERVICE_EVICTION_SHARDS", "1025", "above 1024"],
      ["SERVICE_MAX_KEY_BYTES", "0", "below 1"],
      ["SERVICE_MAX_KEY_BYTES", "65537", "above 65536"],
      ["SERVICE_MAX_BATCH_ITEMS", "0", "below 1"],
      ["SERVICE_MAX_BATCH_ITEMS", "100001", "above 100000"],
      ["SERVICE_AUTH_FAIL_LIMIT", "-1", "negative"],
      ["SERVICE_AUTH_FAIL_LIMIT", "ten", "not an integer"],
      // sizes
      ["SERVICE_MAX_VALUE_BYTES", "16MiB", "above 15 MiB"],
      ["SERVICE_MAX_VALUE_BYTES", "0", "below 1"],
      ["SERVICE_MAX_VALUE_BYTES", "8mib", "unit in wrong case"],
      ["SERVICE_MAX_VALUE_BYTES", "1.5MiB", "fractional size"],
      ["SERVICE_MAX_VALUE_BYTES", "8TiB", "unknown unit"],
      ["SERVICE_MAX_BODY_BYTES", "1023", "below 1024"],
      ["SERVICE_MAX_BODY_BYTES", "257MiB", "above 256 MiB"],
      ["SERVICE_HINT_MAX_BYTES", "0", "below 1"],
      ["SERVICE_HINT_MAX_BYTES", "-1", "negative"],
      ["SERVICE_COMPRESSION_THRESHOLD", "big", "not a size"],
      // enums
      ["SERVICE_LOG_LEVEL", "verbose", "unknown level"],
      ["SERVICE_LOG_LEVEL", "trace", "unknown level"],
      ["SERVICE_WRITE_CONSISTENCY", "two", "unknown level"],
      ["SERVICE_READ_CONSISTENCY", "majority", "unknown level"],
      ["SERVICE_EVICTION_ALGORITHM", "fifo", "unknown algorithm"],
      // addresses
      ["SERVICE_API_ADDR", "8080", "port without colon"],
      ["SERVICE_API_ADDR", "localhost", "no port"],
      ["SERVICE_MGMT_ADDR", "host:65536", "port out of range"],
      ["SERVICE_DIST_ADDR", "::1:7946", "unbracketed IPv6"],
      ["SERVICE_DIST_ADDR", "host:port", "non-numeric port"],
      // text that must not be empty
      ["SERVICE_OIDC_IDENTITY_CLAIM", "   ", "blank claim name"],
      ["SERVICE_OIDC_SCOPE_CLAIM", "  ", "blank claim name"],
    ];
    for (const [name, value, why] of cases) {
      it(`${name}=${JSON.stringify(value)} (${why})`, () => {
        const e = expectSettingError({ [name]: value }, name);
        // The message quotes what was given, so the operator sees the offending text.
        if (value.trim() !== "") expect(e.message).to.include(JSON.stringify(value));
      });
    }
  });

  describe("seeds", () => {
    /** Seeds need an advertised address peers can dial. */
    const withSeeds = (env: Record<string, string>) => load({ SERVICE_DIST_ADDR: "10.0.0.1:7946", ...env });

    it("parses id@host:port entries", () => {
      const c = withSeeds({ SERVICE_NODE_ID: "n1", SERVICE_SEEDS: "n2@10.0.0.2:7946,n3@node-3:7000" });
      expect(c.seeds).to.deep.equal([
        { id: "n2", address: "10.0.0.2:7946" },
        { id: "n3", address: "node-3:7000" },
      ]);
    });

    it("parses a bare host:port with an empty id", () => {
      const c = withSeeds({ SERVICE_NODE_ID: "n1", SERVICE_SEEDS: "10.0.0.2:7946" });
      expect(c.seeds).to.deep.equal([{ id: "", address: "10.0.0.2:7946" }]);
    });

    it("accepts bracketed IPv6 seeds and ignores spaces and empty entries", () => {
      const c = withSeeds({ SERVICE_NODE_ID: "n1", SERVICE_SEEDS: " n2@[::1]:7946 , ,n3@h:1, " });
      expect(c.seeds).to.deep.equal([
        { id: "n2", address: "[::1]:7946" },
        { id: "n3", address: "h:1" },
      ]);
    });

    it("drops the local node from the seed list", () => {
      const c = withSeeds({ SERVICE_NODE_ID: "n2", SERVICE_SEEDS: "n1@h1:7946,n2@h2:7946,n3@h3:7946" });
      expect(c.seeds.map((s) => s.id)).to.deep.equal(["n1", "n3"]);
    });

    it("drops the local node when the id comes from the hostname", () => {
      const c = loadConfig({ SERVICE_DIST_ADDR: "10.0.0.1:7946", SERVICE_SEEDS: "box@h1:7946,other@h2:7946" }, { hostname: "box" });
      expect(c.seeds.map((s) => s.id)).to.deep.equal(["other"]);
    });

    const bad: Array<[string, string]> = [
      ["n2@", "no address"],
      ["@h:7946", "empty id before @"],
      ["n2@h", "no port"],
      ["n2@h:0", "port 0"],
      ["n2@h:70000", "port out of range"],
      ["h:7946,garbage", "one bad entry among good ones"],
      ["n2@::1:7946", "unbracketed IPv6"],
    ];
    for (const [value, why] of bad) {
      it(`rejects SERVICE_SEEDS=${JSON.stringify(value)} (${why})`, () => {
        expectSettingError({ SERVICE_SEEDS: value }, "SERVICE_SEEDS", /seed/);
      });
    }
  });

  describe("cross-field rules", () => {
    it("a TLS certificate without a key names the key variable", () => {
      expectSettingError({ SERVICE_API_TLS_CERT: "/c.pem" }, "SERVICE_API_TLS_KEY", "SERVICE_API_TLS_CERT");
      expectSettingError({ SERVICE_MGMT_TLS_CERT: "/c.pem" }, "SERVICE_MGMT_TLS_KEY", "SERVICE_MGMT_TLS_CERT");
      expectSettingError({ SERVICE_DIST_TLS_CERT: "/c.pem" }, "SERVICE_DIST_TLS_KEY", "SERVICE_DIST_TLS_CERT");
    });

    it("a TLS key without a certificate names the certificate variable", () => {
      expectSettingError({ SERVICE_API_TLS_KEY: "/k.pem" }, "SERVICE_API_TLS_CERT", "SERVICE_API_TLS_KEY");
      expectSettingError({ SERVICE_MGMT_TLS_KEY: "/k.pem" }, "SERVICE_MGMT_TLS_CERT", "SERVICE_MGMT_TLS_KEY");
      expectSettingError({ SERVICE_DIST_TLS_KEY: "/k.pem" }, "SERVICE_DIST_TLS_CERT", "SERVICE_DIST_TLS_KEY");
    });

    it("a client CA without a certificate names the CA variable", () => {
      expectSettingError({ SERVICE_API_TLS_CLIENT_CA: "/ca.pem" }, "SERVICE_API_TLS_CLIENT_CA");
      expectSettingError({ SERVICE_DIST_TLS_CA: "/ca.pem" }, "SERVICE_DIST_TLS_CA");
    });

    it("a peer (dist) certificate and key without a CA names SERVICE_DIST_TLS_CA (mutual TLS between nodes)", () => {
      expectSettingError({ SERVICE_DIST_TLS_CERT: "/c.pem", SERVICE_DIST_TLS_KEY: "/k.pem" }, "SERVICE_DIST_TLS_CA", "SERVICE_DIST_TLS_CERT");
      const c = load({ SERVICE_DIST_TLS_CERT: "/c.pem", SERVICE_DIST_TLS_KEY: "/k.pem", SERVICE_DIST_TLS_CA: "/ca.pem" });
      expect(c.distTls).to.deep.equal({ certFile: "/c.pem", keyFile: "/k.pem", caFile: "/ca.pem" });
    });

    it("an OIDC issuer without an audience names the audience", () => {
      expectSettingError({ SERVICE_OIDC_ISSUER: "https://idp.example.com" }, "SERVICE_OIDC_AUDIENCE", "SERVICE_OIDC_ISSUER");
    });

    it("an OIDC audience without an issuer names the issuer", () => {
      expectSettingError({ SERVICE_OIDC_AUDIENCE: "cache" }, "SERVICE_OIDC_ISSUER", "SERVICE_OIDC_AUDIENCE");
    });

    for (const issuer of ["not a url", "idp.example.com", "ftp://idp.example.com", "file:///etc/passwd"]) {
      it(`rejects the non-http(s) OIDC issuer ${JSON.stringify(issuer)}`, () => {
        expectSettingError({ SERVICE_OIDC_ISSUER: issuer, SERVICE_OIDC_AUDIENCE: "cache" }, "SERVICE_OIDC_ISSUER", JSON.stringify(issuer));
      });
    }

    it("SERVICE_HINT_TTL past half of SERVICE_TOMBSTONE_TTL is refused (a replayed hint could outlive the tombstones of a later delete); half is taken", () => {
      const e = expectSettingError({ SERVICE_TOMBSTONE_TTL: "20s" }, "SERVICE_HINT_TTL", "SERVICE_TOMBSTONE_TTL (20000 ms), 10000 ms");
      expect(e.message).to.include("got 30000 ms");
      expectSettingError({ SERVICE_HINT_TTL: "5m1ms" }, "SERVICE_HINT_TTL", "SERVICE_TOMBSTONE_TTL");
      expect(load({ SERVICE_HINT_TTL: "5m" })).to.include({ hintTtlMs: 300_000, tombstoneTtlMs: 600_000 });
      expect(load({ SERVICE_TOMBSTONE_TTL: "20s", SERVICE_HINT_TTL: "10s" })).to.include({ hintTtlMs: 10_000, tombstoneTtlMs: 20_000 });
    });

    it("two listeners on the same port are refused, naming the later one", () => {
      const e = expectSettingError({ SERVICE_MGMT_ADDR: ":8080" }, "SERVICE_MGMT_ADDR", "SERVICE_API_ADDR");
      expect(e.message).to.include("8080");
      expectSettingError({ SERVICE_DIST_ADDR: "127.0.0.1:8081" }, "SERVICE_DIST_ADDR", "SERVICE_MGMT_ADDR");
      expectSettingError({ SERVICE_API_ADDR: ":9000", SERVICE_DIST_ADDR: ":9000" }, "SERVICE_DIST_ADDR", "SERVICE_API_ADDR");
    });

    for (const addr of [":7946", "0.0.0.0:7946", "[::]:7946"]) {
      it(`SERVICE_DIST_ADDR=${addr} with SERVICE_SEEDS set is refused: peers dial that address, and its host is unspecified`, () => {
        expectSettingError({ SERVICE_DIST_ADDR: addr, SERVICE_SEEDS: "n2@10.0.0.2:7946" }, "SERVICE_DIST_ADDR", /advertised to peers/);
      });
    }

    it("SERVICE_DIST_ADDR with port 0 and SERVICE_SEEDS set is refused: peers would be told to dial port 0", () => {
      const e = expectSettingError({ SERVICE_DIST_ADDR: "10.0.0.1:0", SERVICE_SEEDS: "n2@10.0.0.2:7946" }, "SERVICE_DIST_ADDR", /port 0.*advertised to peers/);
      expect(e.message).to.include("10.0.0.1:7946");
      expect(load({ SERVICE_DIST_ADDR: "127.0.0.1:0" }).distAddr.port, "a node of its own may take a port the system picks").to.equal(0);
    });

    it("without seeds (a cluster of one) the default :7946 stays valid, and a seed list of only this node counts as none", () => {
      expect(load({}).distAddr).to.deep.equal({ host: "", port: 7946 });
      expect(load({ SERVICE_NODE_ID: "n1", SERVICE_SEEDS: "n1@10.0.0.1:7946" }).distAddr).to.deep.equal({ host: "", port: 7946 });
      expect(load({ SERVICE_DIST_ADDR: "node-1.cache.svc:7946", SERVICE_SEEDS: "n2@10.0.0.2:7946" }).distAddr.host).to.equal("node-1.cache.svc");
    });

    it("several listeners on port 0 (pick at run time) are allowed", () => {
      const c = load({ SERVICE_API_ADDR: "127.0.0.1:0", SERVICE_MGMT_ADDR: "127.0.0.1:0", SERVICE_DIST_ADDR: "127.0.0.1:0" });
      expect([c.apiAddr.port, c.mgmtAddr.port, c.distAddr.port]).to.deep.equal([0, 0, 0]);
    });
  });

  describe("tokens", () => {
    it("peerToken falls back to SERVICE_AUTH_TOKEN", () => {
      expect(load({ SERVICE_AUTH_TOKEN: "shared" }).peerToken).to.equal("shared");
    });

    it("SERVICE_PEER_TOKEN overrides SERVICE_AUTH_TOKEN for peerToken only", () => {
      const c = load({ SERVICE_AUTH_TOKEN: "client", SERVICE_PEER_TOKEN: "peer" });
      expect(c.peerToken).to.equal("peer");
      expect(c.authToken).to.equal("client");
    });

    it("SERVICE_PEER_TOKEN alone sets peerToken and no client token", () => {
      const c = load({ SERVICE_PEER_TOKEN: "peer" });
      expect(c.peerToken).to.equal("peer");
      expect(c.authToken).to.equal(undefined);
    });
  });

  describe("settings view", () => {
    it("lists every variable of the SETTINGS table once, in table order", () => {
      const c = load();
      expect(c.settings.map((s) => s.name)).to.deep.equal(SETTINGS.map((s) => s.name));
      expect(new Set(c.settings.map((s) => s.name)).size).to.equal(SETTINGS.length);
    });

    it("marks variables from the environment with source env, the rest with default", () => {
      const c = load({ SERVICE_REPLICATION: "5", SERVICE_HEARTBEAT: "2s" });
      for (const s of c.settings) {
        const expected = s.name === "SERVICE_REPLICATION" || s.name === "SERVICE_HEARTBEAT" ? "env" : "default";
        expect(s.source, s.name).to.equal(expected);
      }
      expect(c.settings.find((s) => s.name === "SERVICE_REPLICATION")?.value).to.equal("5");
      expect(c.settings.find((s) => s.name === "SERVICE_HEARTBEAT")?.value).to.equal("2s");
    });

    it("shows defaults as written in the table", () => {
      const c = load();
      const byName = new Map(c.settings.map((s) => [s.name, s.value]));
      expect(byName.get("SERVICE_HINT_TTL")).to.equal("30s");
      expect(byName.get("SERVICE_CAPACITY")).to.equal("100000");
      expect(byName.get("SERVICE_API_ADDR")).to.equal(":8080");
      expect(byName.get("SERVICE_WRITE_CONSISTENCY")).to.equal("quorum");
    });

    it("shows the effective node id and dead-after even when they were derived", () => {
      const c = loadConfig({ SERVICE_HEARTBEAT: "500ms" }, { hostname: "box-9" });
      const id = c.settings.find((s) => s.name === "SERVICE_NODE_ID");
      expect(id).to.deep.equal({ name: "SERVICE_NODE_ID", value: "box-9", source: "default" });
      const dead = c.settings.find((s) => s.name === "SERVICE_DEAD_AFTER");
      expect(dead).to.deep.equal({ name: "SERVICE_DEAD_AFTER", value: "3000ms", source: "default" });
    });

    it("redacts SERVICE_AUTH_TOKEN and SERVICE_PEER_TOKEN", () => {
      const c = load({ SERVICE_AUTH_TOKEN: "client-secret", SERVICE_PEER_TOKEN: "peer-secret" });
      const auth = c.settings.find((s) => s.name === "SERVICE_AUTH_TOKEN");
      const peer = c.settings.find((s) => s.name === "SERVICE_PEER_TOKEN");
      expect(auth).to.deep.equal({ name: "SERVICE_AUTH_TOKEN", value: "[redacted]", source: "env" });
      expect(peer).to.deep.equal({ name: "SERVICE_PEER_TOKEN", value: "[redacted]", source: "env" });
    });

    it("never shows a secret value anywhere in the settings view", () => {
      const c = load({ SERVICE_AUTH_TOKEN: "client-secret-123", SERVICE_PEER_TOKEN: "peer-secret-456" });
      const text = JSON.stringify(c.settings);
      expect(text).to.not.include("client-secret-123");
      expect(text).to.not.include("peer-secret-456");
    });

    it("does not claim a secret is set when it is not", () => {
      const c = load();
      expect(c.settings.find((s) => s.name === "SERVICE_AUTH_TOKEN")?.value).to.not.equal("[redacted]");
    });

    it("the SETTINGS table marks exactly the tokens as secret", () => {
      const secrets = SETTINGS.filter((s) => s.secret).map((s) => s.name).sort();
      expect(secrets).to.include.members(["SERVICE_AUTH_TOKEN", "SERVICE_PEER_TOKEN"]);
    });

    it("every SETTINGS entry has a SERVICE_ name and a meaning", () => {
      for (const s of SETTINGS) {
        expect(s.name).to.match(/^SERVICE_[A-Z0-9_]+$/);
        expect(s.meaning.length, s.name).to.be.greaterThan(0);
      }
    });
  });

  describe("unknown variables", () => {
    it("lists unknown SERVICE_* names, sorted, and ignores other variables", () => {
      const c = load({ SERVICE_REPLICATON: "3", SERVICE_AAA: "x", PATH: "/bin", HOME: "/root", service_lower: "x", SERVICE_REPLICATION: "3" });
      expect(c.unknownVariables).to.deep.equal(["SERVICE_AAA", "SERVICE_REPLICATON"]);
    });

    it("lists an unknown variable even when it is empty", () => {
      expect(load({ SERVICE_TYPO: "" }).unknownVariables).to.deep.equal(["SERVICE_TYPO"]);
    });
  });

  describe("immutability", () => {
    it("returns a frozen config", () => {
      const c = load({ SERVICE_DIST_ADDR: "h0:7946", SERVICE_SEEDS: "n2@h:1" });
      expect(Object.isFrozen(c)).to.equal(true);
      expect(() => {
        (c as { replication: number }).replication = 9;
      }).to.throw(TypeError);
      expect(c.replication).to.equal(3);
    });

    it("freezes the seed list, settings view and unknown-variable list", () => {
      const c = load({ SERVICE_DIST_ADDR: "h0:7946", SERVICE_SEEDS: "n2@h:1", SERVICE_X: "1" });
      expect(Object.isFrozen(c.seeds)).to.equal(true);
      expect(Object.isFrozen(c.settings)).to.equal(true);
      expect(Object.isFrozen(c.unknownVariables)).to.equal(true);
      for (const s of c.settings) expect(Object.isFrozen(s), s.name).to.equal(true);
    });

    it("freezes the TLS and OIDC sub-objects", () => {
      const c = load({ SERVICE_API_TLS_CERT: "c", SERVICE_API_TLS_KEY: "k", SERVICE_OIDC_ISSUER: "https://i", SERVICE_OIDC_AUDIENCE: "a" });
      expect(Object.isFrozen(c.apiTls)).to.equal(true);
      expect(Object.isFrozen(c.oidc)).to.equal(true);
    });

    it("freezes the listener addresses and each seed entry too (deeply frozen)", () => {
      const c = load({ SERVICE_DIST_ADDR: "h0:7946", SERVICE_SEEDS: "n2@h:1" });
      expect(Object.isFrozen(c.apiAddr), "apiAddr").to.equal(true);
      expect(Object.isFrozen(c.mgmtAddr), "mgmtAddr").to.equal(true);
      expect(Object.isFrozen(c.distAddr), "distAddr").to.equal(true);
      expect(Object.isFrozen(c.seeds[0]), "seeds[0]").to.equal(true);
    });

    it("two loads share nothing: each call returns its own objects", () => {
      const a = load();
      const b = load();
      expect(a).to.not.equal(b);
      expect(a.apiAddr).to.not.equal(b.apiAddr);
      expect(a).to.deep.equal(b);
    });

    it("does not read process.env: only the given environment counts", () => {
      const before = process.env.SERVICE_REPLICATION;
      process.env.SERVICE_REPLICATION = "7";
      try {
        expect(load({}).replication).to.equal(3);
      } finally {
        if (before === undefined) delete process.env.SERVICE_REPLICATION;
        else process.env.SERVICE_REPLICATION = before;
      }
    });
  });
});
