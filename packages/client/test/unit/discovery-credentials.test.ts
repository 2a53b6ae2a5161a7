// Which discovered endpoints a client adopts, and so which hosts ever see its credentials: never a
// downgrade from https to http, and with credentials only the configured origins unless
// `trustDiscoveredEndpoints` says otherwise.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import type { ClientOptions } from "../../src/options.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch } from "./fake-fetch.js";

const SEED = "https://seed:8080";
const OTHERS = ["http://evil:8080", "https://evil:8443", "https://seed:9999"];

/** A client whose seed names OTHERS (as api and management URLs) and answers 503 to the rest. */
async function discovered(o: Partial<ClientOptions>, seed = SEED) {
  const f = new FakeFetch().on(seed, (call) =>
    call.url.endsWith("/v1/cluster/endpoints") ? answer(200, { membership_version: 2, endpoints: OTHERS.map((u, i) => ({ node: `n${i}`, api_url: u, mgmt_url: u, state: "alive" })) }) : envelope(503, "UNAVAILABLE"),
  );
  for (const u of OTHERS) f.on(u, () => envelope(503, "UNAVAILABLE"));
  const clock = new ManualClock();
  const c = new HypercacheClient({ endpoints: [seed], fetch: f.fetch, randomStart: false, discovery: { atStart: false, intervalMs: 0 }, runtime: { clock, timers: clock, random: seededRandom(1) }, ...o });
  await c.refreshEndpoints().catch(() => undefined);
  await c.get("k").catch(() => undefined);
  await c.members().catch(() => undefined);
  const authorized = [...new Set(f.calls.filter((x) => x.init.headers.authorization !== undefined).map((x) => x.endpoint))];
  return { adopted: c.endpoints().map((e) => e.url).filter((u) => u !== seed), mgmt: c.managementEndpoints().map((e) => e.url), authorized };
}

describe("client discovery and credentials", () => {
  const credentials: Array<[string, Partial<ClientOptions>]> = [
    ["a bearer token", { token: "secret" }],
    ["a token provider", { token: async () => "secret" }],
    ["Basic", { basic: { username: "u", password: "p" } }],
    ["a custom auth provider", { auth: { authorization: () => "Custom x" } }],
  ];
  for (const [label, o] of credentials) {
    it(`with ${label}, no discovered endpoint on another origin is adopted, and only the seed sees the credential`, async () => {
      const r = await discovered(o);
      expect(r.adopted).to.deep.equal([]);
      expect(r.mgmt).to.deep.equal([]);
      expect(r.authorized).to.deep.equal([SEED]);
    });
  }

  it("with trustDiscoveredEndpoints, the https ones are adopted and get the credential; never the http one", async () => {
    const r = await discovered({ token: "secret", trustDiscoveredEndpoints: true });
    expect(r.adopted).to.have.members(["https://evil:8443", "https://seed:9999"]);
    expect(r.authorized).to.not.include("http://evil:8080");
  });

  it("without credentials, https seeds never lead to an http endpoint", async () => {
    const r = await discovered({});
    expect(r.adopted).to.have.members(["https://evil:8443", "https://seed:9999"]);
  });

  it("with an http seed and no credentials, every discovered endpoint is adopted (nothing to downgrade, nothing to leak)", async () => {
    const r = await discovered({}, "http://plain:8080");
    expect(r.adopted).to.have.members(OTHERS);
  });
});

describe("client discovery and a client certificate", () => {
  it("a Node client with a client certificate (mTLS) adopts discovered endpoints of its configured origins only", async () => {
    const { HypercacheClient: NodeClient } = await import("../../src/node.js");
    const f = new FakeFetch().on(SEED, (call) =>
      call.url.endsWith("/v1/cluster/endpoints") ? answer(200, { membership_version: 2, endpoints: OTHERS.map((u, i) => ({ node: `n${i}`, api_url: u, mgmt_url: u, state: "alive" })) }) : envelope(503, "UNAVAILABLE"),
    );
    const clock = new ManualClock();
    const c = new NodeClient({ endpoints: [SEED], fetch: f.fetch, tls: { cert: "client cert", key: "client key" }, randomStart: false, discovery: { atStart: false, intervalMs: 0 }, runtime: { clock, timers: clock, random: seededRandom(1) } });
    await c.refreshEndpoints();
    expect(c.endpoints().map((e) => e.url)).to.deep.equal([SEED]);
    await c.close();
  });
});
