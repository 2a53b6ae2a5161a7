import { expect } from "chai";
import { assertTarget, isLabAddress, nodeAddress } from "../../chaos/net/addresses.js";
import { effectiveCapabilities, hasCapability } from "../../chaos/net/capabilities.js";
import { cutRuleset, slowRuleset } from "../../chaos/net/nft-rules.js";
import { SeededRandom } from "../../chaos/lib/random.js";
import { missingFile, skipReason, type Nemesis } from "../../chaos/nemesis/nemesis.js";
import { clockSkewNemesis } from "../../chaos/nemesis/process-faults.js";
import { LIBFAKETIME } from "../../chaos/proc/chaos-node.js";
import { parseOptions, replayCommand } from "../../chaos/run/options.js";
import { planKeys } from "../../chaos/workload/keys.js";

const KNOWN = ["kill", "pause", "isolate"];

describe("chaos harness: pure parts", () => {
  describe("addresses", () => {
    it("accepts only 198.18.0.0/24 (and loopback in loopback mode)", () => {
      expect(isLabAddress("198.18.0.11")).to.equal(true);
      expect(isLabAddress("198.18.1.11")).to.equal(false);
      expect(isLabAddress("198.18.0.300")).to.equal(false);
      expect(() => assertTarget("10.0.0.1", "netns")).to.throw(/198\.18\.0\.0\/24/);
      expect(() => assertTarget("127.0.0.1", "netns")).to.throw();
      expect(() => assertTarget("127.0.0.1", "loopback")).not.to.throw();
      expect(nodeAddress(0)).to.equal("198.18.0.11");
    });
  });

  describe("nftables rulesets", () => {
    it("a cut is one transaction that replaces its table and drops both directions", () => {
      const text = cutRuleset(["198.18.0.12", "198.18.0.13"]);
      expect(text.split("\n").slice(0, 2)).to.deep.equal(["add table inet hcchaos_cut", "delete table inet hcchaos_cut"]);
      expect(text).to.contain("ip saddr { 198.18.0.12, 198.18.0.13 } drop");
      expect(text).to.contain("ip daddr { 198.18.0.12, 198.18.0.13 } drop");
    });

    it("refuses any address outside the lab network", () => {
      expect(() => cutRuleset(["192.168.1.1"])).to.throw(/refusing/);
      expect(() => slowRuleset([{ address: "198.18.0.12", port: 7946, proxyAddress: "127.0.0.1", proxyPort: 1 }])).to.throw(/refusing/);
    });

    it("a slow link redirects new peer connections to the proxy and resets the old ones", () => {
      const text = slowRuleset([{ address: "198.18.0.12", port: 7946, proxyAddress: "198.18.0.254", proxyPort: 17001 }]);
      expect(text).to.contain("type nat hook output priority -100");
      expect(text).to.contain("ip daddr 198.18.0.12 tcp dport 7946 dnat to 198.18.0.254:17001");
      expect(text).to.contain("ip daddr 198.18.0.12 tcp dport 7946 reject with tcp reset");
    });
  });

  describe("capabilities", () => {
    it("reads CAP_NET_ADMIN from the effective mask", () => {
      const mask = effectiveCapabilities("Name:\tnode\nCapEff:\t0000000000001000\n");
      expect(hasCapability(mask, 12n)).to.equal(true);
      expect(hasCapability(effectiveCapabilities("CapEff:\t0000000000000000\n"), 12n)).to.equal(false);
    });
  });

  describe("options", () => {
    it("expands --nemesis all to a seeded order, the same for the same seed", () => {
      const a = parseOptions(["--seed", "7"], KNOWN, () => 1);
      const b = parseOptions(["--seed", "7"], KNOWN, () => 1);
      expect(a.kind === "run" && [...a.options.nemeses].sort()).to.deep.equal([...KNOWN].sort());
      expect(a).to.deep.equal(b);
    });

    it("keeps an explicit list in order and refuses an unknown nemesis", () => {
      const c = parseOptions(["--nemesis", "pause,kill"], KNOWN, () => 1);
      expect(c.kind === "run" && c.options.nemeses).to.deep.equal(["pause", "kill"]);
      expect(() => parseOptions(["--nemesis", "meteor"], KNOWN, () => 1)).to.throw(/unknown nemesis/);
    });

    it("the replay command parses back to the same options", () => {
      const c = parseOptions(["--seed", "42", "--nodes", "3", "--nemesis", "kill", "--env", "SERVICE_HEARTBEAT=500ms", "--allow-skip"], KNOWN, () => 1);
      if (c.kind !== "run") throw new Error("expected a run");
      const argv = replayCommand(c.options).split(" ").slice(4);
      expect(parseOptions(argv, KNOWN, () => 99)).to.deep.equal(c);
    });

    it("--valgrind names one node, and the replay command keeps it", () => {
      const c = parseOptions(["--seed", "5", "--valgrind", "n2"], KNOWN, () => 1);
      if (c.kind !== "run") throw new Error("expected a run");
      expect(c.options.valgrind).to.equal("n2");
      expect(parseOptions(replayCommand(c.options).split(" ").slice(4), KNOWN, () => 99)).to.deep.equal(c);
      expect(() => parseOptions(["--valgrind", "all"], KNOWN, () => 1)).to.throw(/node id such as n1/);
    });
  });

  describe("key plan and random", () => {
    it("gives each single-writer key one worker and keeps contended, conditional, counter and lease keys apart", () => {
      const keys = planKeys({ single: 150, contended: 50, cas: 20, counters: 10, leases: 4, workers: 8 });
      expect(keys).to.have.length(234);
      expect(keys.filter((k) => k.kind === "single" && k.writer === 3)).to.have.length(19);
      expect(new Set(keys.map((k) => k.key)).size).to.equal(234);
      expect(keys.filter((k) => k.kind === "cas").map((k) => k.key).slice(0, 2)).to.deep.equal(["x000", "x001"]);
      expect(keys.filter((k) => k.kind === "counter").map((k) => k.key).slice(-1)).to.deep.equal(["n009"]);
      expect(keys.filter((k) => k.kind === "lease").map((k) => k.key)).to.deep.equal(["l000", "l001", "l002", "l003"]);
      for (const k of keys) if (k.kind !== "single") expect(k.writer, k.key).to.equal(undefined);
    });

    it("the seeded random replays the same sequence", () => {
      const a = new SeededRandom(5);
      const b = new SeededRandom(5);
      expect([a.next(), a.int(1, 6), a.shuffle([1, 2, 3, 4])]).to.deep.equal([b.next(), b.int(1, 6), b.shuffle([1, 2, 3, 4])]);
    });
  });

  describe("phases a machine cannot run", () => {
    const nemesis = (over: Partial<Nemesis>): Nemesis => ({ name: "x", needsNetwork: false, description: "", run: async () => ({}), heal: async () => {}, ...over });
    const netns = { mode: "netns" } as const;
    const loopback = { mode: "loopback", reason: "not root" } as const;

    it("skips a network fault on loopback, and a fault whose tool is missing anywhere", () => {
      expect(skipReason(nemesis({ needsNetwork: true }), loopback)).to.equal("not root");
      expect(skipReason(nemesis({ needsNetwork: true }), netns)).to.equal(undefined);
      expect(skipReason(nemesis({ missing: () => "lib.so is missing (apt-get install lib)" }), netns)).to.equal("lib.so is missing (apt-get install lib)");
      expect(skipReason(nemesis({ missing: () => undefined }), loopback)).to.equal(undefined);
      expect(skipReason(nemesis({}), netns)).to.equal(undefined);
    });

    it("the clock skew needs libfaketime: without it the node would run on the true clock", () => {
      expect(missingFile("/x/lib.so", "lib", () => false)).to.equal("/x/lib.so is missing (apt-get install lib)");
      expect(missingFile("/x/lib.so", "lib", () => true)).to.equal(undefined);
      expect(clockSkewNemesis.missing?.(() => false)).to.equal(`${LIBFAKETIME} is missing (apt-get install faketime)`);
      expect(clockSkewNemesis.missing?.(() => true)).to.equal(undefined);
    });
  });
});
