// The settings of this round: SERVICE_DRAIN_TIMEOUT and SERVICE_READY_CATCHUP_TIMEOUT (durations,
// 60 s), and the rate limits: off at 0, the burst twice the rate by default (shown by /config),
// the scope node or cluster; a bad value is a SettingError naming the variable (exit 2).
import { expect } from "chai";
import { loadConfig } from "../../../src/config/load-config.js";
import { settingErrorOf } from "../../helpers/setting-error.js";

const load = (env: Record<string, string>) => loadConfig({ SERVICE_NODE_ID: "n1", ...env }, { hostname: "h" });

const settingError = (env: Record<string, string>) => settingErrorOf(() => load(env));

describe("config: drain, readiness and rate-limit settings", () => {
  it("defaults: 60 s drain and catch-up timeouts, rate limits off", () => {
    const c = load({});
    expect(c.drainTimeoutMs).to.equal(60_000);
    expect(c.readyCatchupTimeoutMs).to.equal(60_000);
    expect(c.rateLimit).to.equal(undefined);
  });

  it("SERVICE_RATE_LIMIT turns limits on with a burst of twice the rate (at least 1), shown by /config", () => {
    expect(load({ SERVICE_RATE_LIMIT: "50" }).rateLimit).to.deep.equal({ ratePerS: 50, burst: 100, scope: "node" });
    expect(load({ SERVICE_RATE_LIMIT: "0.2" }).rateLimit).to.deep.equal({ ratePerS: 0.2, burst: 1, scope: "node" });
    const c = load({ SERVICE_RATE_LIMIT: "5", SERVICE_RATE_BURST: "7", SERVICE_RATE_LIMIT_SCOPE: "cluster" });
    expect(c.rateLimit).to.deep.equal({ ratePerS: 5, burst: 7, scope: "cluster" });
    expect(load({ SERVICE_RATE_LIMIT: "5" }).settings.find((s) => s.name === "SERVICE_RATE_BURST")?.value).to.equal("10");
  });

  for (const [name, value] of [
    ["SERVICE_RATE_LIMIT", "-1"],
    ["SERVICE_RATE_LIMIT", "fast"],
    ["SERVICE_RATE_LIMIT", "1e3"],
    ["SERVICE_RATE_BURST", "0"],
    ["SERVICE_RATE_LIMIT_SCOPE", "region"],
    ["SERVICE_DRAIN_TIMEOUT", "soon"],
    ["SERVICE_READY_CATCHUP_TIMEOUT", "-5s"],
  ] as const) {
    it(`${name}=${value} is refused naming the variable`, () => {
      const e = settingError({ [name]: value });
      expect(e.variable).to.equal(name);
      expect(e.message.startsWith(`${name}: `)).to.equal(true);
    });
  }
});
