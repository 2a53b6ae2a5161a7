// Whole-store scans pause so requests are served meanwhile: Merkle summaries and range pages every
// SCAN_LIMITS.merkleRecords records, the key browser's local listing every SCAN_SLICE_RECORDS.
// These tests count the pauses with an injected yieldToLoop, write to the store during them, and
// check that the answers stay right.
import { expect } from "chai";
import { CacheError } from "../../src/core/errors.js";
import { KEY_LISTINGS_AT_ONCE_MAX, KEY_LISTINGS_RETRY_AFTER_S, SCAN_LIMITS, SCAN_SLICE_RECORDS } from "../../src/core/limits.js";
import { MerkleBuilder } from "../../src/cluster/anti-entropy/merkle.js";
import { simCluster, type SimCluster } from "../helpers/sim-cluster.js";
import { collectKeys } from "../helpers/store-contents.js";
import { BASE_VERSION, rec, tomb } from "./data-path-fixtures.js";

const RECORDS = 3 * SCAN_SLICE_RECORDS + 100;

describe("sim: whole-store scans yield to the event loop", function () {
  this.timeout(60_000);

  let c: SimCluster;
  let pauses: number;
  /** Runs at every pause (a write landing while a scan is paused). */
  let duringPause: () => void;
  /** While set, every pause waits for it (scans held mid-way). */
  let held: Promise<void> | undefined;

  beforeEach(async () => {
    pauses = 0;
    duringPause = () => {};
    held = undefined;
    c = await simCluster({
      nodes: 2,
      startLoops: false,
      env: { SERVICE_REPLICATION: "2", SERVICE_CAPACITY: String(4 * RECORDS) },
      yieldToLoop: async () => {
        pauses++;
        duringPause();
        await (held ?? Promise.resolve());
      },
    });
    // Replication 2 over two nodes: both own every key, so every record is in the compared set.
    for (let i = 0; i < RECORDS; i++) c.node("n1").store.apply(rec(`key-${i}`, "v", BASE_VERSION + i, "n1"));
  });

  afterEach(async () => {
    await c.stop();
  });

  it("a Merkle root over more than a slice of records pauses once per SCAN_LIMITS.merkleRecords records and counts every record", async () => {
    const root = await c.node("n1").merkle.answers.root("n2", 64, 0);
    expect(root.recordCount).to.equal(RECORDS);
    // One pause per merkleRecords records scanned (digests are taken during the scan).
    expect(pauses).to.be.within(Math.floor(RECORDS / SCAN_LIMITS.merkleRecords), Math.ceil(RECORDS / SCAN_LIMITS.merkleRecords));
  });

  it("a small store is summarized without pausing", async () => {
    const small = await simCluster({ nodes: 2, startLoops: false, env: { SERVICE_REPLICATION: "2" }, yieldToLoop: () => Promise.reject(new Error("paused")) });
    try {
      for (let i = 0; i < 100; i++) small.node("n1").store.apply(rec(`key-${i}`, "v", BASE_VERSION + i, "n1"));
      expect((await small.node("n1").merkle.answers.root("n2", 4, 0)).recordCount).to.equal(100);
    } finally {
      await small.stop();
    }
  });

  it("the asking side's own summary folds its digests into the leaves in slices too (the fold of a million digests held the loop in one piece)", async () => {
    for (let i = 0; i < RECORDS; i++) c.node("n2").store.apply(rec(`key-${i}`, "v", BASE_VERSION + i, "n1"));
    // Per tree (both nodes summarize during a sync), reset at every pause.
    let sinceYield = new Map<MerkleBuilder, number>();
    let most = 0;
    duringPause = () => (sinceYield = new Map());
    const addDigest = MerkleBuilder.prototype.addDigest;
    MerkleBuilder.prototype.addDigest = function (this: MerkleBuilder, keyHash: number, hi: number, lo: number) {
      const n = (sinceYield.get(this) ?? 0) + 1;
      sinceYield.set(this, n);
      most = Math.max(most, n);
      addDigest.call(this, keyHash, hi, lo);
    };
    try {
      const sync = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
      expect(sync).to.deep.include({ failed: false, clean: true });
    } finally {
      MerkleBuilder.prototype.addDigest = addDigest;
    }
    expect(most, "digests folded between two pauses").to.be.at.most(SCAN_LIMITS.merkleRecords);
  });

  it("writes and deletes landing while a sync is paused do not break it, and the next sync converges", async () => {
    let n = 0;
    duringPause = () => {
      // A new key, a rewrite and a delete on the answering node, between two slices.
      const node = c.node("n1");
      node.store.apply(rec(`late-${n}`, "x", BASE_VERSION + RECORDS + n, "n1"));
      node.store.apply(rec(`key-${n}`, "y", BASE_VERSION + 10 * RECORDS + n, "n1"));
      node.store.apply(tomb(`key-${RECORDS - 1 - n}`, BASE_VERSION + 10 * RECORDS + n, "n1"));
      n++;
    };
    const first = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
    expect(first.failed).to.equal(false);
    expect(pauses).to.be.greaterThan(3);
    duringPause = () => {};
    // Whatever the first pass missed, the second one settles: both stores then hold the same records.
    await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
    const again = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
    expect(again).to.deep.include({ pulled: 0, clean: true, failed: false });
    const live = (id: string) => collectKeys(c.node(id).store, () => true).sort();
    expect(live("n2")).to.deep.equal(live("n1"));
    expect(live("n2")).to.include.members(["late-0", "late-1"]);
  });

  it("range pages over a sparse leaf pause between slices and still return every record of the leaf once", async () => {
    const ae = c.node("n1").merkle.answers;
    const keys: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const page = await ae.range("n2", 1024, [7], cursor);
      keys.push(...page.records.map((r) => r.key));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== "" && pages < 100);
    expect(cursor).to.equal("");
    expect(pauses, "one scan over every record, paused per slice").to.be.within(Math.floor(RECORDS / SCAN_LIMITS.merkleRecords), Math.ceil(RECORDS / SCAN_LIMITS.merkleRecords) + 1);
    expect(keys.length).to.equal(new Set(keys).size);
    const leaves = await ae.leaves("n2", 1024);
    expect(leaves[7]).to.not.equal("0000000000000000");
    expect(keys.length).to.be.greaterThan(0);
    const all = (await ae.range("n2", 1, [0], "")).records.length;
    expect(all, "first page of the whole set is full").to.equal(1000);
  });

  it("the key browser's local listing pauses per slice and answers the same sorted keys", async () => {
    const listing = await c.node("n1").cache.listKeys("key-1*", 50_000);
    const expected = collectKeys(c.node("n1").store, (k) => k.startsWith("key-1")).sort();
    expect(listing.keys).to.deep.equal(expected);
    expect(listing.truncated).to.equal(false);
    expect(pauses).to.be.within(Math.floor(RECORDS / SCAN_SLICE_RECORDS), Math.ceil(RECORDS / SCAN_SLICE_RECORDS) + 1);
  });

  it("a node coordinates at most KEY_LISTINGS_AT_ONCE_MAX listings at once; one more is 503 with Retry-After, and the slot comes back", async () => {
    let release = () => {};
    held = new Promise<void>((resolve) => (release = resolve));
    const running = Array.from({ length: KEY_LISTINGS_AT_ONCE_MAX }, () => c.node("n1").cache.listKeys("key-2*", 50_000));
    await Promise.resolve();
    const refused = await c.node("n1").cache.listKeys("key-2*", 50_000).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(CacheError);
    expect(refused).to.deep.include({ code: "UNAVAILABLE", details: { listings_max: KEY_LISTINGS_AT_ONCE_MAX } });
    expect((refused as CacheError).retryAfterS).to.equal(KEY_LISTINGS_RETRY_AFTER_S);
    // Another node still takes listings: the cap is per coordinating node.
    const onN2 = c.node("n2").cache.listKeys("key-2*", 50_000);
    release();
    held = undefined;
    const expected = collectKeys(c.node("n1").store, (k) => k.startsWith("key-2")).sort();
    for (const listing of await Promise.all([...running, onN2])) expect(listing.keys).to.deep.equal(expected);
    // Finished listings give their slots back.
    expect((await c.node("n1").cache.listKeys("key-2*", 50_000)).keys).to.deep.equal(expected);
  });

  it("a listing whose caller is gone stops at its next pause and gives its slot back", async () => {
    let release = () => {};
    held = new Promise<void>((resolve) => (release = resolve));
    const abandoned = new AbortController();
    const listings = Array.from({ length: KEY_LISTINGS_AT_ONCE_MAX }, (_, i) => c.node("n1").cache.listKeys("key-2*", 50_000, i === 0 ? abandoned.signal : undefined));
    const first = listings[0]!.then(
      () => "finished",
      (err: unknown) => (err instanceof CacheError ? err.message : String(err)),
    );
    await Promise.resolve();
    abandoned.abort();
    release();
    held = undefined;
    expect(await first).to.contain("abandoned");
    // The three others scan on, and a new listing finds the freed slot (a fifth would be refused).
    const expected = collectKeys(c.node("n1").store, (k) => k.startsWith("key-2")).sort();
    const late = c.node("n1").cache.listKeys("key-2*", 50_000);
    for (const listing of await Promise.all([...listings.slice(1), late])) expect(listing.keys).to.deep.equal(expected);
  });

  it("a listing whose caller was gone before it started (during authentication) rejects at once, without scanning", async () => {
    const gone = new AbortController();
    gone.abort();
    const neverRan = await c.node("n1").cache.listKeys("key-2*", 50_000, gone.signal).then(
      () => "ran",
      (err: unknown) => String(err),
    );
    expect(neverRan).to.contain("abandoned");
    expect(pauses, "no slice scanned").to.equal(0);
  });

  it("a listing cut by max keeps the first max keys in sort order", async () => {
    const listing = await c.node("n1").cache.listKeys("*", 500);
    const expected = collectKeys(c.node("n1").store, () => true).sort().slice(0, 500);
    expect(listing).to.deep.include({ keys: expected, truncated: true });
  });
  it("anti-entropy does not store a pulled record whose version is more than 24 h ahead of this node's clock, and says so", async () => {
    const aheadVersion = (c.clock.nowMs() + 48 * 3600 * 1000) * 1000;
    c.node("n1").store.apply(rec("from-the-future", "x", aheadVersion, "n1"));
    const r = await c.node("n2").merkle.syncer.syncWith({ id: "n1", address: c.sim("n1").address });
    expect(r.failed).to.equal(false);
    expect(c.node("n2").store.peek("from-the-future")).to.equal(undefined);
    expect(c.node("n2").store.peek("key-1"), "the other records of the page are stored").to.not.equal(undefined);
    const warned = c.sim("n2").logger.records.filter((x) => x.message === "record from a peer skipped");
    expect(warned.map((x) => x.fields.key)).to.deep.equal(["from-the-future"]);
  });

  it("a peer keys page stops once matching has cost SCAN_SLICE_RECORDS units; following the cursor covers the store, and a cheap filter needs one page per shard", async () => {
    const endpoint = c.node("n1").endpoint;
    const pagesFor = (q: string) => {
      const seen: string[] = [];
      let cursor = "";
      let pages = 0;
      do {
        const page = endpoint.keysPage(cursor, 0, q);
        seen.push(...page.keys);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== "" && pages < 10_000);
      return { seen, pages, cursor };
    };
    const cheap = pagesFor("key-");
    expect(cheap.pages).to.equal(c.node("n1").store.shardCount);
    expect(cheap.seen.length).to.equal(RECORDS);
    expect(new Set(cheap.seen).size).to.equal(RECORDS);
    // 4001 tokens against 210-character keys: about 200 units per key, so a shard takes several pages.
    for (let i = 0; i < 4000; i++) c.node("n1").store.apply(rec(`long-${String(i).padStart(4, "0")}-${"x".repeat(200)}`, "v", BASE_VERSION + i, "n1"));
    const costly = pagesFor(`l*${"?".repeat(4000)}`);
    expect(costly.cursor).to.equal("");
    expect(costly.seen, "no key is long enough to match").to.deep.equal([]);
    expect(costly.pages, "the work budget cut the shards into pages").to.be.greaterThan(2 * c.node("n1").store.shardCount);
    expect(pagesFor("l").seen.length, "the long keys are listed").to.equal(4000);
  });
});

describe("sim: a rebalance tick collects one batch per turn of the event loop", function () {
  this.timeout(60_000);

  it("at the settings' maxima (batches of 10,000, 64 in flight) no stretch between two pauses looks at more than one batch's records and a scan slice (a tick looked at every record back to back: 424 ms for 200,000)", async () => {
    let looked = 0;
    let most = 0;
    const c = await simCluster({
      nodes: 2,
      env: { SERVICE_REPLICATION: "1", SERVICE_REBALANCE_BATCH_SIZE: "10000", SERVICE_REBALANCE_MAX_CONCURRENT: "64", SERVICE_AUTO_SYNC_INTERVAL: "0", SERVICE_CAPACITY: "100000" },
      yieldToLoop: async () => {
        looked = 0;
      },
    });
    try {
      const n1 = c.node("n1");
      const records = 6 * SCAN_LIMITS.rebalanceRecordsPerBatch;
      for (let i = 0; i < records; i++) n1.store.apply(rec(`key-${i}`, "v", BASE_VERSION + i, "n1"));
      const scanRecords = n1.store.scanRecords.bind(n1.store);
      n1.store.scanRecords = ((shard, slot, fn) =>
        scanRecords(shard, slot, (r) => {
          most = Math.max(most, ++looked);
          return fn(r);
        })) as typeof n1.store.scanRecords;
      c.join("n3", { SERVICE_REPLICATION: "1", SERVICE_REBALANCE_BATCH_SIZE: "10000", SERVICE_REBALANCE_MAX_CONCURRENT: "64", SERVICE_AUTO_SYNC_INTERVAL: "0", SERVICE_CAPACITY: "100000" });
      await c.settle();
      for (let i = 0; i < 40 && (n1.loops.rebalancer.busy || i < 4); i++) await c.advance(250);
      expect(c.node("n3").store.items, "keys moved to the new node").to.be.above(0);
      // One batch's records, and a slice of another scan (the catch-up's Merkle) in the same stretch.
      expect(most, "records looked at between two pauses").to.be.at.most(SCAN_LIMITS.rebalanceRecordsPerBatch + SCAN_LIMITS.merkleRecords);
    } finally {
      await c.stop();
    }
  });
});
