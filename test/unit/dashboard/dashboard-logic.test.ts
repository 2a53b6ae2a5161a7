// The dashboard's logic, by table: formatting, the rate history's ring buffers, member rows
// (pruned nodes shown dead), the Authorization header the SDK client of each credential sends,
// and how a failed call is shown. (Reconnect delays are the SDK's: watch-status.test.ts.)
import { expect } from "chai";
// The classes of the build the dashboard uses (its browser build), so that instanceof holds.
import { AllEndpointsFailedError, ForbiddenError, TransportError } from "@hypercache/client/browser";
import { createClient, problemOf } from "../../../dashboard/src/api.js";
import { forgetCredential, loadCredential, saveCredential, type Credential } from "../../../dashboard/src/credential.js";
import { ago, asText, dataLine, duration, hexDump, isGlob } from "../../../dashboard/src/format.js";
import { memberRows } from "../../../dashboard/src/member-rows.js";
import { HISTORY_SAMPLES, RATE_SERIES, RateHistory, Ring } from "../../../dashboard/src/series.js";

/** The Authorization header (or undefined) the dashboard's client of `c` sends with GET /me. */
async function authorization(c: Credential): Promise<string | undefined> {
  let sent: string | undefined = "not called";
  const fetch = async (_url: string, init: RequestInit) => {
    sent = (init.headers as Record<string, string>).authorization;
    return new Response(JSON.stringify({ id: "x", scopes: [], capabilities: [] }), { status: 200, headers: { "content-type": "application/json" } });
  };
  const saved = globalThis.fetch;
  globalThis.fetch = fetch as typeof globalThis.fetch;
  try {
    await createClient("http://127.0.0.1:9", c).identity();
  } finally {
    globalThis.fetch = saved;
  }
  return sent;
}

class MemoryStorage {
  private readonly m = new Map<string, string>();
  get length() { return this.m.size; }
  getItem(k: string) { return this.m.get(k) ?? null; }
  setItem(k: string, v: string) { this.m.set(k, v); }
  removeItem(k: string) { this.m.delete(k); }
  clear() { this.m.clear(); }
  key(i: number) { return [...this.m.keys()][i] ?? null; }
}

describe("dashboard logic", () => {
  it("formats ages and durations", () => {
    for (const [ms, text] of [[0, "just now"], [4_000, "4 s ago"], [180_000, "3 min ago"], [3 * 3600_000, "3 h ago"]] as const) expect(ago(1_000_000 - ms, 1_000_000)).to.equal(text);
    for (const [ms, text] of [[59_000, "59 s"], [242_000, "4 min 2 s"], [11_100_000, "3 h 5 min"], [176_400_000, "2 d 1 h"], [-5, "0 s"]] as const) expect(duration(ms)).to.equal(text);
  });

  it("tells a glob from a prefix as the server does (*, ? or [)", () => {
    for (const [q, glob] of [["user:", false], ["user:*", true], ["a?c", true], ["[ab]x", true], ["plain-key", false]] as const) expect(isGlob(q), q).to.equal(glob);
  });

  it("previews valid UTF-8 as text and anything else as hex", () => {
    expect(asText(new TextEncoder().encode("héllo\nworld\t!"))).to.equal("héllo\nworld\t!");
    expect(asText(new Uint8Array([0xff, 0xfe]))).to.equal(undefined);
    expect(asText(new Uint8Array([0x61, 0x00]))).to.equal(undefined);
    // A preview cut by the server at 4096 bytes may end inside a character: still text when cut.
    const cut = new TextEncoder().encode("é".repeat(3000)).subarray(0, 4095);
    expect(asText(cut, true)).to.equal("é".repeat(2047));
    expect(asText(cut, false), "an uncut value ending mid-character is not UTF-8").to.equal(undefined);
    expect(hexDump(new Uint8Array([0x68, 0x69, 0x00]))).to.equal(`00000000  ${"68 69 00".padEnd(47)}  hi.`);
    expect(hexDump(new Uint8Array(17)).split("\n")[1]).to.match(/^00000010 {2}00/);
  });

  it("shows the keys and values held against the byte budget, or that there is none", () => {
    expect(dataLine(300 * 1024 * 1024, 400 * 1024 * 1024)).to.equal("300.0 MiB of 400.0 MiB (75.0%)");
    expect(dataLine(2048, 0)).to.equal("2.0 KiB (no byte limit)");
  });

  it("a ring keeps the last `capacity` values, oldest first", () => {
    const r = new Ring(3);
    expect(r.toArray()).to.deep.equal([]);
    for (const v of [1, 2, 3, 4, 5]) r.push(v);
    expect(r.toArray()).to.deep.equal([3, 4, 5]);
    expect(r.last()).to.equal(5);
    expect(r.length).to.equal(3);
  });

  it("rates come from counter deltas over time, a counter reset gives 0, and history is capped at 5 minutes", () => {
    const h = new RateHistory();
    const writes = RATE_SERIES.findIndex((s) => s.metrics.includes("dist.write.attempts" as never));
    h.add(1_000, { "dist.write.attempts": 100 });
    expect(h.times.length, "one snapshot gives no rate yet").to.equal(0);
    h.add(3_000, { "dist.write.attempts": 140 });
    expect(h.series[writes]!.last()).to.equal(20);
    h.add(4_000, { "dist.write.attempts": 5 });
    expect(h.series[writes]!.last(), "restart").to.equal(0);
    expect(h.windowTotal(writes), "20/s held for 0 s, then 0/s for 1 s").to.equal(0);
    for (let i = 0; i < HISTORY_SAMPLES + 50; i++) h.add(5_000 + i * 1000, { "dist.write.attempts": 10 * i });
    expect(h.times.length).to.equal(HISTORY_SAMPLES);
    expect(h.series[writes]!.last()).to.equal(10);
    expect(h.windowTotal(writes)).to.be.closeTo(10 * (HISTORY_SAMPLES - 1), 1e-9);
    expect([...h.missing], "series whose counter no snapshot carried").to.include("evictions/s").and.not.include("writes/s");
  });

  it("member rows add a dead row for every known node pruned from membership, sorted by id", () => {
    const member = (id: string, state: "alive" | "suspect") => ({ id, address: `${id}:1`, api_url: "", mgmt_url: "", state, draining: false, incarnation: 1, last_seen: "2026-01-01T00:00:00Z" });
    const rows = memberRows({ node: "n1", replication: 3, virtual_nodes: 128, membership_version: 9, known_nodes: ["n1", "n2", "n3"], members: [member("n2", "suspect"), member("n1", "alive")] });
    expect(rows.map((r) => `${r.id}:${r.state}:${r.pruned}`)).to.deep.equal(["n1:alive:false", "n2:suspect:false", "n3:dead:true"]);
  });

  it("credentials: the Authorization header of each kind (Basic over http only with the user's consent), kept in the given (session) storage only", async () => {
    expect(await authorization({ kind: "bearer", token: "t0k" })).to.equal("Bearer t0k");
    expect(await authorization({ kind: "basic", user: "ålice", password: "p:w", plainHttp: true })).to.equal(`Basic ${Buffer.from("ålice:p:w").toString("base64")}`);
    const refused = await authorization({ kind: "basic", user: "ålice", password: "p:w" }).then(
      () => "sent",
      (err: unknown) => String(err),
    );
    expect(refused, "no password over plain http without the consent").to.match(/refusing Basic credentials over plain http/);
    expect(await authorization({ kind: "none" })).to.equal(undefined);
    const s = new MemoryStorage();
    saveCredential(s, { kind: "bearer", token: "x" });
    expect(loadCredential(s)).to.deep.equal({ kind: "bearer", token: "x" });
    s.setItem("hypercache.dashboard.credential", "{broken");
    expect(loadCredential(s)).to.equal(undefined);
    expect(s.length, "a damaged entry is dropped").to.equal(0);
    saveCredential(s, { kind: "none" });
    forgetCredential(s);
    expect(s.length).to.equal(0);
  });

  it("a failed call shows as the node's message and code, NETWORK when the node did not answer, the only endpoint's failure for 'all endpoints failed'", () => {
    const forbidden = new ForbiddenError({ status: 403, code: "FORBIDDEN", message: "needs admin", endpoint: "http://n" });
    expect(problemOf(forbidden)).to.deep.equal({ message: "needs admin", code: "FORBIDDEN" });
    expect(problemOf(new AllEndpointsFailedError([{ endpoint: "http://n", error: new TransportError("Failed to fetch", "http://n"), durationMs: 1 }]))).to.deep.equal({ message: "the node did not answer", code: "NETWORK" });
    expect(problemOf(new AllEndpointsFailedError([{ endpoint: "http://n", error: forbidden, durationMs: 1 }]))).to.deep.equal({ message: "needs admin", code: "FORBIDDEN" });
  });
});
