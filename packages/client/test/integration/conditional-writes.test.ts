// @hypercache/client's conditional writes, counters and touches against a real 3-node cluster:
// one winner among racing If-Match sets, If-None-Match creation, a conditional delete, touch,
// concurrent increments that return distinct consecutive values, getOrLoad loading a missing key
// once for 20 callers, and increments through an entry node killed with SIGKILL that are
// neither lost nor added twice (their replays carry the call's Idempotency-Key).
import { expect } from "chai";
import { startCluster, type NodeProcess } from "../../../../test/helpers/node-process.js";
import { FAST_TIMERS } from "../../../../test/integration/cluster-helpers.js";
import { HypercacheClient, PreconditionFailedError, type IncrResult } from "../../src/node.js";

describe("client conditional writes and counters on a real 3-node cluster", function () {
  this.timeout(120_000);
  let nodes: NodeProcess[] = [];
  let client: HypercacheClient;

  beforeEach(async () => {
    ({ nodes } = await startCluster(3, { ...FAST_TIMERS }));
    client = new HypercacheClient({ endpoints: nodes.map((n) => n.api), randomStart: false, discovery: false, timeoutMs: 3000 });
  });
  afterEach(async () => {
    await client.close();
    await Promise.all(nodes.map((n) => n.stop("SIGKILL")));
  });

  it("of 10 sets racing on one ETag through every node exactly one wins; the others get 412 naming the winner's ETag", async () => {
    const first = await client.set("doc", "v0");
    expect(first.etag).to.match(/^".+"$/);
    const clients = nodes.map((n) => new HypercacheClient({ endpoints: [n.api], discovery: false }));
    try {
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => (clients[i % 3] as HypercacheClient).set("doc", `v${i + 1}`, { ifMatch: first.etag as string }).catch((e: unknown) => e)));
      const won = outcomes.filter((o) => !(o instanceof Error)) as Array<{ etag?: string }>;
      const lost = outcomes.filter((o) => o instanceof PreconditionFailedError) as PreconditionFailedError[];
      expect(won).to.have.length(1);
      expect(lost).to.have.length(9);
      for (const e of lost) expect(e.details?.current_etag).to.equal(won[0]?.etag);
      expect((await client.getItem("doc", { consistency: "quorum" }))?.etag).to.equal(won[0]?.etag);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("ifNoneMatch creates once; a delete with a stale ETag changes nothing, with the current one it deletes; touch sets and removes the expiry", async () => {
    const created = await client.set("once", "a", { ifNoneMatch: "*" });
    expect(await client.set("once", "b", { ifNoneMatch: "*" }).catch((e: unknown) => e)).to.be.instanceOf(PreconditionFailedError);
    const touched = await client.touch("once", { ttl: "1h", ifMatch: created.etag as string });
    expect(touched.expiresAt).to.be.a("string");
    expect(touched.etag).to.not.equal(created.etag);
    expect(await client.delete("once", { ifMatch: created.etag as string }).catch((e: unknown) => e)).to.be.instanceOf(PreconditionFailedError);
    expect(await client.getText("once")).to.equal("a");
    const persisted = await client.touch("once", { persist: true });
    expect(persisted.expiresAt).to.equal(undefined);
    expect((await client.head("once"))?.etag).to.equal(persisted.etag);
    expect((await client.delete("once", { ifMatch: persisted.etag as string })).deleted).to.equal(true);
    expect(await client.get("once")).to.equal(undefined);
  });

  it("getOrLoad with a load longer than the wait: waiters told LEASE_HELD read again and get the value soon after the fill, never loading", async () => {
    const clients = nodes.map((n) => new HypercacheClient({ endpoints: [n.api], discovery: false }));
    try {
      let loads = 0;
      const load = async () => {
        loads++;
        await new Promise((r) => setTimeout(r, 2500));
        return "slow value";
      };
      const t0 = Date.now();
      const got = await Promise.all(Array.from({ length: 9 }, (_, i) => (clients[i % 3] as HypercacheClient).getOrLoad("slow:1", load, { lease: "10s", wait: "1s" })));
      const took = Date.now() - t0;
      expect(loads).to.equal(1);
      for (const g of got) expect(new TextDecoder().decode(g)).to.equal("slow value");
      expect(took, "well before the 10 s lease ends").to.be.below(6000);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("getOrLoad whose first load fails gives the lease back: one waiter through another node loads next at once (not after the 20 s lease), and every waiter gets its value", async () => {
    const clients = nodes.map((n) => new HypercacheClient({ endpoints: [n.api], discovery: false }));
    try {
      let loads = 0;
      const load = async () => {
        loads++;
        await new Promise((r) => setTimeout(r, 300));
        if (loads === 1) throw new Error("database down");
        return "second try";
      };
      const t0 = Date.now();
      const first = (clients[0] as HypercacheClient).getOrLoad("flaky:1", load, { lease: "20s", wait: "5s" }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      const waiters = Array.from({ length: 6 }, (_, i) => (clients[1 + (i % 2)] as HypercacheClient).getOrLoad("flaky:1", load, { lease: "20s", wait: "5s" }));
      expect(((await first) as Error).message).to.equal("database down");
      for (const g of await Promise.all(waiters)) expect(new TextDecoder().decode(g)).to.equal("second try");
      expect(loads).to.equal(2);
      expect(Date.now() - t0, "well before the 20 s lease ran out").to.be.below(5000);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("setMany and deleteMany with conditions: If-None-Match creates only the absent keys; a stale If-Match is a per-item 412 naming the current ETag", async () => {
    await client.set("b2", "old");
    const created = await client.setMany([{ key: "b1", value: "1", ifNoneMatch: "*" }, { key: "b2", value: "2", ifNoneMatch: "*" }]);
    expect(created.map((r) => r.stored)).to.deep.equal([true, false]);
    expect(created[1]?.error).to.be.instanceOf(PreconditionFailedError);
    const b1 = await client.head("b1");
    const current = (created[1]?.error as PreconditionFailedError).currentEtag;
    expect(current).to.match(/^".+"$/);
    expect(current).to.equal((await client.head("b2"))?.etag);
    const dels = await client.deleteMany([{ key: "b1", ifMatch: b1?.etag as string }, { key: "b2", ifMatch: '"stale-n9"' }]);
    expect(dels.map((r) => r.deleted)).to.deep.equal([true, false]);
    expect((dels[1]?.error as PreconditionFailedError).currentEtag).to.equal(current);
    expect(await client.getText("b2")).to.equal("old");
  });

  it("200 concurrent increments through every node return 200 distinct consecutive values", async () => {
    const clients = nodes.map((n) => new HypercacheClient({ endpoints: [n.api], discovery: false }));
    try {
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (clients[i % 3] as HypercacheClient).incr("hits")));
      expect(results.map((r) => r.value).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(await client.getText("hits", { consistency: "quorum" })).to.equal("200");
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("getOrLoad: 20 concurrent callers through every node of a missing key load it once; every one gets the value, and the key holds it", async () => {
    const clients = nodes.map((n) => new HypercacheClient({ endpoints: [n.api], discovery: false }));
    try {
      let loads = 0;
      const load = async (key: string) => {
        loads++;
        await new Promise((r) => setTimeout(r, 300));
        return `loaded ${key}`;
      };
      const got = await Promise.all(Array.from({ length: 20 }, (_, i) => (clients[i % 3] as HypercacheClient).getOrLoad("report:7", load, { lease: "5s", wait: "2s", ttl: "1h" })));
      expect(loads).to.equal(1);
      for (const g of got) expect(new TextDecoder().decode(g)).to.equal("loaded report:7");
      const item = await client.getItem("report:7", { consistency: "quorum" });
      expect(new TextDecoder().decode(item?.value)).to.equal("loaded report:7");
      expect(item?.ttlMs).to.be.greaterThan(3_500_000);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("increments through an entry node killed with SIGKILL (not the key's primary) lose none and add none twice: replays carry the call's Idempotency-Key", async () => {
    const owners = await client.owners("kills");
    const entry = nodes.find((n) => n.id !== owners[0]) as NodeProcess;
    const through = new HypercacheClient({ endpoints: [entry.api, ...nodes.filter((n) => n !== entry).map((n) => n.api)], randomStart: false, discovery: false, timeoutMs: 3000 });
    const total = 600;
    const acked: IncrResult[] = [];
    let failed = 0;
    let next = 0;
    let killed = false;
    const worker = async () => {
      while (next < total) {
        const i = next++;
        if (i === 200 && !killed) {
          killed = true;
          void entry.stop("SIGKILL");
        }
        await through.incr("kills", { consistency: "quorum" }).then((r) => acked.push(r), () => failed++);
      }
    };
    try {
      await Promise.all(Array.from({ length: 8 }, worker));
    } finally {
      await through.close();
    }
    expect(acked.length).to.be.greaterThan(total - 50);
    await new Promise((r) => setTimeout(r, 1000));
    const held = Number(await client.getText("kills", { consistency: "quorum" }));
    // The primary lived: a replay of a call it applied was answered from its remembered result.
    expect(held).to.be.within(acked.length, acked.length + failed);
  });
});
