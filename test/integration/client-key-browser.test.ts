// The key browser GET /v1/cache/keys of one real node over real HTTP: prefix and glob filters,
// cursors, limit and max, paging, and that deleted keys are never listed. (Expired keys are
// checked in client-api.test.ts, next to the only real-time wait of these tests.)
import { expect } from "chai";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { expectEnvelope } from "../helpers/envelope.js";

type Json = Record<string, unknown>;

interface Page {
  keys: string[];
  next_cursor: string;
  total_matched: number;
  truncated: boolean;
  node: string;
  partial_nodes: string[];
}

let node: NodeProcess;

const PAGE_KEYS = Array.from({ length: 1100 }, (_, i) => `page:${String(i).padStart(4, "0")}`);
const OTHER_KEYS = [
  "user:1", "user:2", "user:10", "user:a", "user:", "users", "usr:1",
  "admin", "apple", "a*b", "a?b", "axb", "a[b", "b-key", "banana", "cherry", "Zed",
];
const DELETED = ["user:deleted", "apple:gone"];

async function browse(query: Record<string, string | number>): Promise<{ status: number; contentType: string; body: Json }> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await fetch(`${node.api}/v1/cache/keys?${params.toString()}`);
  const contentType = res.headers.get("content-type") ?? "";
  expect(contentType).to.match(/^application\/json/);
  return { status: res.status, contentType, body: (await res.json()) as Json };
}

async function page(query: Record<string, string | number>): Promise<Page> {
  const r = await browse(query);
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
  expect(r.body).to.have.all.keys("keys", "next_cursor", "total_matched", "truncated", "node", "partial_nodes");
  return r.body as unknown as Page;
}

async function expectBadRequest(query: Record<string, string | number>): Promise<void> {
  const r = await browse(query);
  expectEnvelope({ status: r.status, contentType: r.contentType, body: r.body }, 400, "BAD_REQUEST");
}

/** Writes each key with itself as value, in batches of at most 1000 items. */
async function batchPut(keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const res = await fetch(`${node.api}/v1/cache/batch/put`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ items: keys.slice(i, i + 1000).map((key) => ({ key, value: key })) }),
    });
    const body = (await res.json()) as { results: Json[] };
    expect(res.status).to.equal(200);
    expect(body.results.every((r) => r.status === 200), JSON.stringify(body).slice(0, 300)).to.equal(true);
  }
}

/** JavaScript's default sort: UTF-16 code units, the documented key order. */
const sorted = (keys: string[]) => [...keys].sort();

describe("client API: the key browser GET /v1/cache/keys on one real node", function () {
  this.timeout(20_000);

  before(async () => {
    node = await startNode({ id: "client-keys-1" });
    await batchPut(sorted(PAGE_KEYS).reverse());
    await batchPut([...OTHER_KEYS, ...DELETED]);
    for (const key of DELETED) {
      const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}`, { method: "DELETE" });
      expect(((await res.json()) as Json).deleted).to.equal(true);
    }
  });

  after(async () => {
    await node?.stop("SIGKILL");
  });

  describe("filters", () => {
    it("a q without *, ? or [ is a literal prefix, and the page carries node, partial_nodes [] and next_cursor ''", async () => {
      const p = await page({ q: "user" });
      expect(p.keys).to.deep.equal(sorted(["user:1", "user:2", "user:10", "user:a", "user:", "users"]));
      expect(p).to.include({ next_cursor: "", total_matched: 6, truncated: false, node: node.id });
      expect(p.partial_nodes).to.deep.equal([]);
      expect((await page({ q: "user:" })).keys).to.deep.equal(sorted(["user:1", "user:2", "user:10", "user:a", "user:"]));
      expect((await page({ q: "nothing-matches" })).keys).to.deep.equal([]);
    });

    it("user:* is a glob matching any suffix, also the empty one", async () => {
      expect((await page({ q: "user:*" })).keys).to.deep.equal(sorted(["user:1", "user:2", "user:10", "user:a", "user:"]));
    });

    it("user:? matches exactly one character", async () => {
      expect((await page({ q: "user:?" })).keys).to.deep.equal(sorted(["user:1", "user:2", "user:a"]));
    });

    it("a glob is anchored at both ends: *er matches nothing here while *r* matches every key containing r", async () => {
      expect((await page({ q: "*er" })).keys).to.deep.equal([]);
      expect((await page({ q: "*r*" })).keys).to.deep.equal(sorted(["user:1", "user:2", "user:10", "user:a", "user:", "users", "usr:1", "cherry"]));
    });

    it("[ab]* matches keys starting with a or b, [!a-z]* and [^a-z]* negate the class", async () => {
      expect((await page({ q: "[ab]*" })).keys).to.deep.equal(sorted(["admin", "apple", "a*b", "a?b", "axb", "a[b", "b-key", "banana"]));
      expect((await page({ q: "[!a-z]*" })).keys).to.deep.equal(["Zed"]);
      expect((await page({ q: "[^a-z]*" })).keys).to.deep.equal(["Zed"]);
    });

    it("a backslash escapes the next glob character: a\\*b, a\\?b and a\\[b match only themselves", async () => {
      expect((await page({ q: "a\\*b" })).keys).to.deep.equal(["a*b"]);
      expect((await page({ q: "a\\?b" })).keys).to.deep.equal(["a?b"]);
      expect((await page({ q: "a\\[b" })).keys).to.deep.equal(["a[b"]);
      expect((await page({ q: "a?b" })).keys).to.deep.equal(sorted(["a*b", "a?b", "axb", "a[b"]));
    });

    it("a malformed glob ([abc, a trailing backslash, a reversed range) is 400 BAD_REQUEST", async () => {
      for (const q of ["[abc", "user:[", "*\\", "[z-a]*"]) await expectBadRequest({ q });
    });
  });

  describe("paging", () => {
    it("limit defaults to 100", async () => {
      const p = await page({ q: "page:" });
      expect(p.keys).to.deep.equal(PAGE_KEYS.slice(0, 100));
      expect(p.total_matched).to.equal(PAGE_KEYS.length);
      expect(p.next_cursor).to.be.a("string").and.not.equal("");
    });

    it("a limit of 1000 is clamped to the ceiling of 500", async () => {
      const p = await page({ q: "page:", limit: 1000 });
      expect(p.keys).to.deep.equal(PAGE_KEYS.slice(0, 500));
      expect(p.next_cursor).to.not.equal("");
    });

    it("a limit or max far above its ceiling (20 digits) is clamped like any other large value, not rejected", async () => {
      expect((await page({ q: "page:", limit: "99999999999999999999" })).keys).to.deep.equal(PAGE_KEYS.slice(0, 500));
      expect(await page({ q: "page:", max: "99999999999999999999", limit: 1 })).to.include({ total_matched: PAGE_KEYS.length, truncated: false });
    });

    it("a max above the ceiling of 50000 is accepted (clamped)", async () => {
      expect(await page({ q: "page:", max: 1_000_000, limit: 1 })).to.include({ total_matched: PAGE_KEYS.length, truncated: false });
    });

    it("limit=0, -1, abc, 1.5 and 1e2 are 400 BAD_REQUEST, and so are max=0, -1 and abc", async () => {
      for (const limit of ["0", "-1", "abc", "1.5", "1e2"]) await expectBadRequest({ q: "page:", limit });
      for (const max of ["0", "-1", "abc"]) await expectBadRequest({ q: "page:", max });
    });

    it("successive pages cover every matching key exactly once in sorted order, and the last page has next_cursor ''", async () => {
      const seen: string[] = [];
      let cursor = "";
      for (let n = 0; n < 20; n++) {
        const p = await page(cursor === "" ? { q: "page:", limit: 120 } : { q: "page:", limit: 120, cursor });
        expect(p.total_matched).to.equal(PAGE_KEYS.length);
        seen.push(...p.keys);
        cursor = p.next_cursor;
        if (cursor === "") break;
        expect(p.keys).to.have.length(120);
      }
      expect(cursor).to.equal("");
      expect(seen).to.deep.equal(PAGE_KEYS);
    });

    it("a page is stable: the same cursor gives the same keys twice", async () => {
      const first = await page({ q: "page:", limit: 50 });
      const a = await page({ q: "page:", limit: 50, cursor: first.next_cursor });
      const b = await page({ q: "page:", limit: 50, cursor: first.next_cursor });
      expect(a.keys).to.deep.equal(PAGE_KEYS.slice(50, 100));
      expect(b).to.deep.equal(a);
    });

    it("an unfiltered listing pages through every live key in sorted order", async () => {
      const seen: string[] = [];
      let cursor = "";
      do {
        const p = await page(cursor === "" ? { limit: 500 } : { limit: 500, cursor });
        seen.push(...p.keys);
        cursor = p.next_cursor;
      } while (cursor !== "");
      expect(seen).to.deep.equal(sorted([...PAGE_KEYS, ...OTHER_KEYS]));
    });

    it("an invalid cursor is 400 BAD_REQUEST", async () => {
      const good = (await page({ q: "page:", limit: 10 })).next_cursor;
      for (const cursor of ["garbage", "!!!", good.slice(0, -2), Buffer.from('{"o":-5}').toString("base64url")]) {
        await expectBadRequest({ q: "page:", limit: 10, cursor });
      }
    });

    it("a cursor reused with a different q, or a different max, is 400 BAD_REQUEST", async () => {
      const p = await page({ q: "page:", limit: 10 });
      await expectBadRequest({ q: "page:0", limit: 10, cursor: p.next_cursor });
      await expectBadRequest({ q: "user", limit: 10, cursor: p.next_cursor });
      await expectBadRequest({ q: "page:", limit: 10, max: 200, cursor: p.next_cursor });
      expect((await page({ q: "page:", limit: 10, cursor: p.next_cursor })).keys).to.deep.equal(PAGE_KEYS.slice(10, 20));
    });
  });

  describe("max", () => {
    it("max truncates the result set to the first max keys in sort order and sets truncated, also when there are far more matches than max", async () => {
      const p = await page({ q: "page:", max: 7 });
      expect(p.keys).to.deep.equal(PAGE_KEYS.slice(0, 7));
      expect(p).to.include({ total_matched: 7, truncated: true, next_cursor: "" });
    });

    it("pages of a truncated result set stop at max", async () => {
      const first = await page({ q: "page:", max: 5, limit: 3 });
      expect(first.keys).to.deep.equal(PAGE_KEYS.slice(0, 3));
      expect(first.truncated).to.equal(true);
      const second = await page({ q: "page:", max: 5, limit: 3, cursor: first.next_cursor });
      expect(second.keys).to.deep.equal(PAGE_KEYS.slice(3, 5));
      expect(second.next_cursor).to.equal("");
    });

    it("a result set exactly the size of max, or smaller, is not truncated", async () => {
      expect(await page({ q: "page:", max: PAGE_KEYS.length, limit: 1 })).to.include({ total_matched: PAGE_KEYS.length, truncated: false });
      expect(await page({ q: "user:?", max: 50000 })).to.include({ total_matched: 3, truncated: false });
    });
  });

  describe("live keys only", () => {
    it("deleted keys are never listed, by prefix, glob or unfiltered", async () => {
      expect((await page({ q: "user:deleted" })).keys).to.deep.equal([]);
      expect((await page({ q: "apple" })).keys).to.deep.equal(["apple"]);
      expect((await page({ q: "*gone*" })).keys).to.deep.equal([]);
      const all = await page({ max: 50000, limit: 1 });
      expect(all.total_matched).to.equal(PAGE_KEYS.length + OTHER_KEYS.length);
    });

    it("a key written after a delete is listed again", async () => {
      await batchPut(["user:deleted"]);
      expect((await page({ q: "user:deleted" })).keys).to.deep.equal(["user:deleted"]);
      await fetch(`${node.api}/v1/cache/user%3Adeleted`, { method: "DELETE" });
      expect((await page({ q: "user:deleted" })).keys).to.deep.equal([]);
    });

    it("after every bad query the node is still running and logged no error-level record", () => {
      expect(node.child.exitCode).to.equal(null);
      expect(node.child.signalCode).to.equal(null);
      const errors = node.logs.filter((r) => r.level === "error");
      expect(errors, JSON.stringify(errors)).to.deep.equal([]);
    });
  });
});
