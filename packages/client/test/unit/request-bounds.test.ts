// A request makes a bounded number of attempts however many endpoints the client knows, and a
// discovery answer cannot grow the pool without bound.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { POOL_ENDPOINTS_MAX } from "../../src/endpoint-pool.js";
import { AllEndpointsFailedError } from "../../src/errors.js";
import { ATTEMPTS_MAX } from "../../src/failover-transport.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, envelope, FakeFetch } from "./fake-fetch.js";

const SEED = "http://seed:1";
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ node: `n${i}`, api_url: `http://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`, mgmt_url: `http://10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8081`, state: "alive" }));

function make(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints: [SEED], fetch: f.fetch, randomStart: false, discovery: { atStart: false, intervalMs: 0 }, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

describe("client request bounds", () => {
  it("a discovery answer of 40,000 endpoints adopts at most POOL_ENDPOINTS_MAX, the seed kept", async () => {
    const f = new FakeFetch().on(SEED, () => answer(200, { membership_version: 1, endpoints: many(40_000) }));
    const c = make(f);
    await c.refreshEndpoints();
    const urls = c.endpoints().map((e) => e.url);
    expect(urls.length).to.equal(POOL_ENDPOINTS_MAX + 1);
    expect(urls).to.include(SEED);
    expect(c.managementEndpoints().length).to.equal(POOL_ENDPOINTS_MAX);
  });

  it("a request whose every endpoint fails stops after ATTEMPTS_MAX attempts, discovery included", async () => {
    const f = new FakeFetch().on(SEED, (call) => (call.url.endsWith("/v1/cluster/endpoints") ? answer(200, { membership_version: 1, endpoints: many(100) }) : envelope(503, "UNAVAILABLE")));
    const c = make(f);
    const err = (await c.get("k").catch((e: unknown) => e)) as AllEndpointsFailedError;
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect(err.attempts).to.have.length(ATTEMPTS_MAX);
    expect(f.calls.filter((x) => x.url.includes("/v1/cache/")).length).to.equal(ATTEMPTS_MAX);
  });

  it("maxAttempts sets the bound", async () => {
    const f = new FakeFetch();
    const c = make(f, { endpoints: ["http://a:1", "http://b:1", "http://c:1"], discovery: false, maxAttempts: 2 });
    const err = (await c.get("k").catch((e: unknown) => e)) as AllEndpointsFailedError;
    expect(err.attempts).to.have.length(2);
  });
});
