// Fault injection: partitions and isolation block calls both ways, seeded drops are reproducible,
// delays use the injected timers; drops count dist.chaos.drops and delays dist.chaos.latencies.
import { expect } from "chai";
import type { CacheError } from "../../../src/core/errors.js";
import { seededRandom } from "../../../src/core/random.js";
import { Metrics } from "../../../src/observability/index.js";
import { Chaos, ChaosTransport, InMemoryNetwork, neverDelivered, type PeerEndpoint } from "../../../src/transport/index.js";
import { ManualClock, flush } from "../../helpers/manual-clock.js";

function endpoint(node: string): PeerEndpoint {
  return { health: () => ({ node, draining: false, incarnation: 1 }) } as unknown as PeerEndpoint;
}

describe("ChaosTransport", () => {
  const setup = (seed = 1) => {
    const clock = new ManualClock();
    const chaos = new Chaos(seededRandom(seed), clock);
    const network = new InMemoryNetwork();
    for (const id of ["a", "b", "c"]) network.register(`${id}:1`, endpoint(id));
    const metrics = new Metrics();
    const from = (id: string) => new ChaosTransport(network.transport(), chaos, id, metrics);
    return { clock, chaos, metrics, from };
  };
  const peer = (id: string) => ({ id, address: `${id}:1` });

  it("a partition blocks calls across groups in both directions and counts each as a drop", async () => {
    const { chaos, metrics, from } = setup();
    chaos.partition(["a"], ["b", "c"]);
    const err = await from("a").health(peer("b")).catch((e: unknown) => e);
    expect((err as CacheError).code).to.equal("UNAVAILABLE");
    expect(neverDelivered(err), "a blocked call never reaches the peer").to.equal(true);
    expect(await from("b").health(peer("a")).catch((e: unknown) => (e as CacheError).code)).to.equal("UNAVAILABLE");
    expect((await from("b").health(peer("c"))).node).to.equal("c");
    expect(metrics.get("dist.chaos.drops")).to.equal(2);
    chaos.heal();
    expect((await from("a").health(peer("b"))).node).to.equal("b");
  });

  it("an isolated node reaches nobody and nobody reaches it until reconnected", async () => {
    const { chaos, from } = setup();
    chaos.isolate("c");
    expect(chaos.blocked("a", "c") && chaos.blocked("c", "b")).to.equal(true);
    expect(chaos.blocked("a", "b")).to.equal(false);
    chaos.reconnect("c");
    expect((await from("a").health(peer("c"))).node).to.equal("c");
  });

  it("seeded drops are reproducible: the same seed drops the same calls", async () => {
    const run = async (seed: number) => {
      const { chaos, from } = setup(seed);
      chaos.dropRate = 0.5;
      const outcomes: boolean[] = [];
      for (let i = 0; i < 40; i++) outcomes.push(await from("a").health(peer("b")).then(() => true, () => false));
      return outcomes;
    };
    const first = await run(7);
    expect(await run(7)).to.deep.equal(first);
    expect(first.filter((ok) => !ok).length).to.be.within(8, 32);
  });

  it("a delay holds the call until the manual clock passes it and counts dist.chaos.latencies", async () => {
    const { chaos, clock, metrics, from } = setup();
    chaos.delayMs = 500;
    let done = false;
    const call = from("a").health(peer("b")).then(() => (done = true));
    await flush();
    expect(done).to.equal(false);
    clock.advance(499);
    await flush();
    expect(done).to.equal(false);
    clock.advance(1);
    await call;
    expect(done).to.equal(true);
    expect(metrics.get("dist.chaos.latencies")).to.equal(1);
  });
});
