import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { cooldownMs, EndpointPool, normalizeBaseUrl } from "../../src/endpoint-pool.js";
import { seededRandom } from "../../src/runtime.js";

const A = "http://a:1";
const B = "http://b:1";
const C = "http://c:1";

function pool(seeds: string[], opts: { seed?: number; randomStart?: boolean; accept?: (u: string) => boolean } = {}) {
  const clock = new ManualClock();
  const p = new EndpointPool(seeds, { clock, random: seededRandom(opts.seed ?? 1), randomStart: opts.randomStart ?? false, ...(opts.accept ? { accept: opts.accept } : {}) });
  return { clock, p };
}

describe("client endpoint pool", () => {
  it("cools a failed endpoint down for 1 s, doubling with each failure in a row up to 30 s", () => {
    const table: [number, number][] = [[1, 1000], [2, 2000], [3, 4000], [4, 8000], [5, 16000], [6, 30000], [7, 30000], [60, 30000]];
    for (const [failures, ms] of table) expect(cooldownMs(failures), `after ${failures} failures`).to.equal(ms);
  });

  it("normalises base URLs (trailing slash, case of scheme and host) and refuses other schemes", () => {
    expect(normalizeBaseUrl("HTTP://Cache-1:8080/")).to.equal("http://cache-1:8080");
    expect(normalizeBaseUrl("https://lb.example/hc/")).to.equal("https://lb.example/hc");
    expect(() => normalizeBaseUrl("ftp://x")).to.throw(/only http/);
    expect(() => normalizeBaseUrl("http://x/?a=1")).to.throw(/no query/);
  });

  it("starts on a random endpoint chosen by the seed, the same one for the same seed", () => {
    const starts = (seed: number) => pool([A, B, C], { seed, randomStart: true }).p.order()[0];
    expect(starts(7)).to.equal(starts(7));
    const seen = new Set(Array.from({ length: 30 }, (_, i) => starts(i)));
    expect(seen.size, "different seeds start on different endpoints").to.equal(3);
  });

  it("stays on an endpoint while it works and moves only when it fails", () => {
    const { p } = pool([A, B, C]);
    expect(p.order()).to.deep.equal([A, B, C]);
    p.succeeded(B);
    expect(p.order()).to.deep.equal([B, C, A]);
    p.failed(B);
    expect(p.order(), "a cooling endpoint goes last").to.deep.equal([C, A, B]);
    p.succeeded(C);
    expect(p.order()[0]).to.equal(C);
  });

  it("tries cooling endpoints last, the one usable soonest first, and again once the cooldown passed", () => {
    const { clock, p } = pool([A, B, C]);
    p.failed(A);
    p.failed(A); // 2 s
    p.failed(B); // 1 s
    expect(p.order()).to.deep.equal([C, B, A]);
    clock.advance(1000);
    expect(p.order().slice(0, 2)).to.have.members([B, C]);
    expect(p.order()[2]).to.equal(A);
    clock.advance(1000);
    expect(p.status().every((s) => s.coolingForMs === 0)).to.equal(true);
  });

  it("adopts discovered endpoints, keeps seeds as a fallback after them, and never empties on an empty answer", () => {
    const { p } = pool(["http://seed:1"]);
    expect(p.adopt([])).to.equal(false);
    expect(p.urls()).to.deep.equal(["http://seed:1"]);
    expect(p.adopt([{ url: A, node: "n1", state: "alive" }, { url: B + "/", node: "n2", state: "suspect" }, { url: "not a url", node: "n3", state: "alive" }])).to.equal(true);
    expect(p.urls()).to.deep.equal([A, B, "http://seed:1"]);
    expect(p.status().find((s) => s.url === B)).to.include({ node: "n2", discovered: true, seed: false });
    p.succeeded(B);
    expect(p.order(), "suspect after alive, seed last").to.deep.equal([B, A, "http://seed:1"]);
    expect(p.adopt([{ url: C, node: "n3", state: "alive" }])).to.equal(true);
    expect(p.urls(), "endpoints no longer listed are dropped, the seed stays").to.deep.equal([C, "http://seed:1"]);
  });

  it("keeps the failure state of an endpoint that discovery lists again", () => {
    const { p } = pool([A]);
    p.failed(A);
    p.adopt([{ url: A, node: "n1", state: "alive" }, { url: B, node: "n2", state: "alive" }]);
    expect(p.status().find((s) => s.url === A)?.consecutiveFailures).to.equal(1);
    expect(p.status().find((s) => s.url === A)?.seed).to.equal(true);
  });

  it("does not adopt endpoints its filter refuses (plain http with Basic credentials)", () => {
    const { p } = pool(["https://seed:1"], { accept: (u) => u.startsWith("https:") });
    expect(p.adopt([{ url: "http://a:1", node: "n1", state: "alive" }])).to.equal(false);
    p.adopt([{ url: "http://a:1", node: "n1", state: "alive" }, { url: "https://b:1", node: "n2", state: "alive" }]);
    expect(p.urls()).to.deep.equal(["https://b:1", "https://seed:1"]);
  });
});
