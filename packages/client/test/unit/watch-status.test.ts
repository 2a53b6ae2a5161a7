// watch() reporting its connection to onStatus: connecting, open, down (reason, attempt, delay)
// and refused, with the reconnect delays of reconnect-delay.ts, all on a ManualClock (nothing
// sleeps but a few real milliseconds for promises to settle).
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { WATCH_IDLE_MS, WATCH_RETRY_MIN_MS, type ClusterEvent, type WatchStatus } from "../../src/cluster-watch.js";
import { AllEndpointsFailedError, ForbiddenError, TimeoutError, UnauthorizedError, UnavailableError } from "../../src/errors.js";
import { reconnectDelayMs, WATCH_RETRY_MAX_MS } from "../../src/reconnect-delay.js";
import type { Random } from "../../src/runtime.js";
import { envelope, FakeFetch, refused, sseAnswer } from "./fake-fetch.js";

const M1 = "http://m1:8081";
const M2 = "http://m2:8081";
const fixed = (v: number): Random => ({ next: () => v });
const settle = () => new Promise((r) => setTimeout(r, 5));
const HEARTBEAT = 'event: heartbeat\ndata: {"n":1}\n\n';

/** A management-only client pinned to `endpoints`, watched in the background. */
async function watching(f: FakeFetch, o: { random?: Random; endpoints?: string[]; reconnect?: boolean } = {}) {
  const clock = new ManualClock();
  const c = new HypercacheClient({ managementEndpoints: o.endpoints ?? [M1], fetch: f.fetch, randomStart: false, runtime: { clock, timers: clock, random: o.random ?? fixed(0) } });
  const statuses: WatchStatus[] = [];
  const events: ClusterEvent[] = [];
  const w = await c.watch({ onStatus: (s) => statuses.push(s), ...(o.reconnect === undefined ? {} : { reconnect: o.reconnect }) });
  const ended = (async () => {
    for await (const e of w) events.push(e);
  })().then(
    () => "ended",
    (err: unknown) => err,
  );
  await settle();
  return { c, clock, w, statuses, events, ended };
}

type Down = Extract<WatchStatus, { state: "down" }>;
const downs = (s: WatchStatus[]) => s.filter((x): x is Down => x.state === "down");

describe("client watch status", () => {
  it("reconnect delays: the base first, doubling per attempt up to 30 s, less up to 20% at random", () => {
    const table: Array<[attempt: number, baseMs: number, random: number, ms: number]> = [
      [1, 1000, 0, 1000],
      [2, 1000, 0, 2000],
      [3, 3000, 0, 12000],
      [5, 3000, 0, WATCH_RETRY_MAX_MS],
      [40, 1000, 0, WATCH_RETRY_MAX_MS],
      [1, 1000, 0.999999, 800],
      [3, 3000, 0.5, 10800],
      [9, 1000, 1, 24000],
      // The server's retry: (3 s, SSE_RETRY_MS), as the dashboard sees it.
      [1, 3000, 0, 3000],
      [2, 3000, 0, 6000],
      [3, 3000, 1, 9600],
      [20, 3000, 0, WATCH_RETRY_MAX_MS],
    ];
    for (const [attempt, baseMs, r, ms] of table) expect(reconnectDelayMs(attempt, baseMs, fixed(r)), `attempt ${attempt}, base ${baseMs}, random ${r}`).to.equal(ms);
  });

  it("reports connecting, then open on the endpoint, then down with the server's retry: delay when the stream ends", async () => {
    let streams = 0;
    const f = new FakeFetch().on(M1, () => (streams++ === 0 ? sseAnswer([`retry: 3000\n\n${HEARTBEAT}`], { endAfter: true }) : sseAnswer([HEARTBEAT])));
    const { clock, w, statuses, events } = await watching(f, { random: fixed(0.5) });
    expect(events.map((e) => e.type)).to.deep.equal(["heartbeat"]);
    expect(statuses.slice(0, 2)).to.deep.equal([{ state: "connecting" }, { state: "open", endpoint: M1 }]);
    expect(statuses[2]).to.deep.equal({ state: "down", reason: "the stream ended", error: undefined, attempt: 1, retryInMs: 2700, retryAtMs: clock.nowMs() + 2700 });
    clock.advance(2699);
    await settle();
    expect(streams, "not before the delay").to.equal(1);
    clock.advance(1);
    await settle();
    expect(streams).to.equal(2);
    expect(statuses.slice(3)).to.deep.equal([{ state: "connecting" }, { state: "open", endpoint: M1 }]);
    w.close();
  });

  it("a node that cannot be reached: down after each attempt, waiting 1 s, 2 s, 4 s ... up to 30 s; an open stream starts the count again", async () => {
    let up = false;
    const f = new FakeFetch().on(M1, () => (up ? sseAnswer([`retry: 500\n\n${HEARTBEAT}`], { endAfter: true }) : refused()));
    const { clock, w, statuses, events } = await watching(f);
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const d = downs(statuses).at(-1);
      if (!d) throw new Error("no down status");
      expect(d).to.include({ reason: `could not connect to ${M1}`, attempt: i + 1, retryAtMs: clock.nowMs() + d.retryInMs });
      expect(d.error).to.be.instanceOf(AllEndpointsFailedError);
      waits.push(d.retryInMs);
      clock.advance(d.retryInMs);
      await settle();
    }
    expect(waits).to.deep.equal([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(f.calls).to.have.length(8);
    expect(statuses.filter((s) => s.state === "open")).to.deep.equal([]);

    up = true;
    clock.advance(30000);
    await settle();
    expect(events).to.have.length(1);
    expect(downs(statuses).at(-1), "the count starts again from the stream's own retry: delay").to.deep.include({ reason: "the stream ended", attempt: 1, retryInMs: 500 });
    w.close();
  });

  it("a stream that breaks is down with 'the connection broke' and its error", async () => {
    const f = new FakeFetch().on(M1, () => sseAnswer([HEARTBEAT], { breakAfter: true }));
    const { w, statuses } = await watching(f);
    const d = downs(statuses)[0];
    expect(d).to.deep.include({ state: "down", reason: "the connection broke", attempt: 1, retryInMs: 1000 });
    expect(d?.error?.message).to.equal("network error");
    w.close();
  });

  it("a 503 (no room for one more subscriber) is down with the node's message, and retried", async () => {
    let calls = 0;
    const f = new FakeFetch().on(M1, () => (calls++ === 0 ? envelope(503, "UNAVAILABLE", "too many event stream subscribers") : sseAnswer([HEARTBEAT])));
    const { clock, w, statuses, events } = await watching(f);
    const d = downs(statuses)[0];
    expect(d).to.deep.include({ reason: "too many event stream subscribers", attempt: 1, retryInMs: 1000 });
    expect(d?.error).to.be.instanceOf(AllEndpointsFailedError);
    expect((d?.error as AllEndpointsFailedError).attempts[0]?.error).to.be.instanceOf(UnavailableError);
    clock.advance(1000);
    await settle();
    expect(events).to.have.length(1);
    expect(statuses.at(-1)).to.deep.equal({ state: "open", endpoint: M1 });
    w.close();
  });

  it("a server retry: under 100 ms counts as 100 ms (retry: 0 from a proxy would reconnect at once, forever)", async () => {
    const f = new FakeFetch().on(M1, () => sseAnswer([`retry: 0\n\n${HEARTBEAT}`], { endAfter: true }));
    const { w, statuses } = await watching(f);
    expect(downs(statuses)[0]?.retryInMs).to.equal(WATCH_RETRY_MIN_MS);
    w.close();
  });

  it("a 401 or 403 is refused: reported with the typed error, the iteration throws it, and nothing is retried", async () => {
    for (const [status, code, cls] of [[401, "UNAUTHORIZED", UnauthorizedError], [403, "FORBIDDEN", ForbiddenError]] as const) {
      const f = new FakeFetch().on(M1, () => envelope(status, code, "no"));
      const { clock, statuses, ended } = await watching(f);
      const err = await ended;
      expect(err, String(status)).to.be.instanceOf(cls);
      expect(statuses).to.deep.equal([{ state: "connecting" }, { state: "refused", error: err }]);
      clock.advance(120_000);
      await settle();
      expect(f.calls, String(status)).to.have.length(1);
    }
  });

  it("any other answer asking again cannot change (400, 404, 406, 410, a 204) ends the watch as refused; 408, 429 and a 200 without a body are down and retried", async () => {
    for (const [status, code] of [[400, "BAD_REQUEST"], [404, "NOT_FOUND"], [406, "UNKNOWN"], [410, "UNKNOWN"], [204, "UNKNOWN"]] as const) {
      const f = new FakeFetch().on(M1, () => envelope(status, code, "no"));
      const { clock, statuses, ended } = await watching(f);
      // Checked before awaiting the end, so a retried answer fails here rather than by timeout.
      expect(statuses.map((x) => x.state), String(status)).to.deep.equal(["connecting", "refused"]);
      const err = await ended;
      expect(err, String(status)).to.be.instanceOf(Error);
      expect(statuses, String(status)).to.deep.equal([{ state: "connecting" }, { state: "refused", error: err }]);
      clock.advance(120_000);
      await settle();
      expect(f.calls, String(status)).to.have.length(1);
    }
    for (const [status, code] of [[408, "UNKNOWN"], [429, "TOO_MANY_REQUESTS"], [200, "UNKNOWN"]] as const) {
      let calls = 0;
      const f = new FakeFetch().on(M1, () => (calls++ === 0 ? envelope(status, code, "later") : sseAnswer([HEARTBEAT])));
      const { clock, w, statuses, events } = await watching(f);
      expect(downs(statuses)[0], String(status)).to.deep.include({ attempt: 1, retryInMs: 1000 });
      clock.advance(1000);
      await settle();
      expect(events, String(status)).to.have.length(1);
      w.close();
    }
  });

  it("each attempt gets a signal of its own, not the watch's (joined below with time limits, which on Node 20 leaves an entry on the source per join); an attempt's signal is aborted when it ends; close() aborts the one under way", async () => {
    const f = new FakeFetch().on(M1, () => refused());
    const { clock, w, statuses } = await watching(f);
    for (let i = 1; i <= 3; i++) {
      clock.advance(downs(statuses).at(-1)?.retryInMs ?? 0);
      await settle();
    }
    const signals = f.calls.map((c) => c.init.signal);
    expect(signals).to.have.length(4);
    expect(new Set(signals).size).to.equal(4);
    expect(signals.every((x) => x?.aborted === true), "each failed attempt's request ends with it").to.equal(true);
    expect(statuses.at(-1)?.state, "while the watch goes on").to.equal("down");
    const streaming = new FakeFetch().on(M1, () => sseAnswer([HEARTBEAT]));
    const open = await watching(streaming);
    expect(open.statuses.at(-1)).to.deep.equal({ state: "open", endpoint: M1 });
    open.w.close();
    expect(streaming.calls[0]?.init.signal?.aborted).to.equal(true);
    w.close();
  });

  it("a consumer that stops iterating (break after --count events) ends the request under way: its signal is aborted", async () => {
    const f = new FakeFetch().on(M1, () => sseAnswer([HEARTBEAT, HEARTBEAT]));
    const c = new HypercacheClient({ managementEndpoints: [M1], fetch: f.fetch, randomStart: false });
    const w = await c.watch();
    for await (const e of w) {
      expect(e.type).to.equal("heartbeat");
      break;
    }
    expect(f.calls[0]?.init.signal?.aborted).to.equal(true);
  });

  it("pinned to one management endpoint, it never asks another origin, not even one its members frames advertise", async () => {
    const advertised = `event: members\ndata: ${JSON.stringify({ membership_version: 2, members: [{ id: "m2", state: "alive", api_url: "http://m2:8080", mgmt_url: M2 }] })}\n\n`;
    const f = new FakeFetch().on(M1, () => sseAnswer([advertised], { endAfter: true })).on(M2, () => sseAnswer([HEARTBEAT]));
    const { clock, w } = await watching(f);
    for (let i = 0; i < 3; i++) {
      clock.advance(30_000);
      await settle();
    }
    expect(new Set(f.order)).to.deep.equal(new Set([M1]));
    expect(f.calls.length).to.be.greaterThan(1);
    w.close();
  });

  it("reconnect: false throws when no stream can be opened, and ends quietly when one ends", async () => {
    const down = await watching(new FakeFetch(), { reconnect: false });
    expect(await down.ended).to.be.instanceOf(AllEndpointsFailedError);
    const once = await watching(new FakeFetch().on(M1, () => sseAnswer([HEARTBEAT], { endAfter: true })), { reconnect: false });
    expect(await once.ended).to.equal("ended");
    expect(once.events).to.have.length(1);
    expect(downs(once.statuses)).to.deep.equal([]);
  });

  it("the wait before a reconnect keeps the process alive (a ref'd timer): between two streams nothing else holds Node's event loop open", async () => {
    const clock = new ManualClock();
    const asked: Array<{ delayMs: number; keepAlive: boolean | undefined }> = [];
    const timers = { every: clock.every.bind(clock), after: (delayMs: number, fn: () => void, o?: { keepAlive?: boolean }) => (asked.push({ delayMs, keepAlive: o?.keepAlive }), clock.after(delayMs, fn)) };
    const c = new HypercacheClient({ managementEndpoints: [M1], fetch: new FakeFetch().fetch, randomStart: false, runtime: { clock, timers, random: fixed(0) } });
    const statuses: WatchStatus[] = [];
    const w = await c.watch({ onStatus: (s) => statuses.push(s) });
    const ended = (async () => {
      for await (const _ of w) void _;
    })().catch((err: unknown) => err);
    await settle();
    expect(downs(statuses)).to.have.length(1);
    expect(asked.filter((a) => a.delayMs === 1000)).to.deep.equal([{ delayMs: 1000, keepAlive: true }]);
    w.close();
    await ended;
  });

  it("a stream that goes silent (a stopped node: open, no byte) is dropped after WATCH_IDLE_MS and the watch reconnects to the next endpoint", async () => {
    const silent = sseAnswer([HEARTBEAT]);
    const f = new FakeFetch().on(M1, () => silent).on(M2, () => sseAnswer([HEARTBEAT]));
    const { clock, w, statuses, events } = await watching(f, { endpoints: [M1, M2] });
    expect(events).to.have.length(1);
    clock.advance(WATCH_IDLE_MS - 1);
    await settle();
    expect(downs(statuses), "not before the idle limit").to.have.length(0);
    clock.advance(1);
    await settle();
    const down = downs(statuses)[0];
    expect(down?.reason).to.equal(`no data for ${WATCH_IDLE_MS} ms`);
    expect(down?.error).to.be.instanceOf(TimeoutError);
    expect(silent.cancelled(), "the silent stream is let go").to.equal(true);
    clock.advance(down?.retryInMs ?? 0);
    await settle();
    expect(f.order).to.deep.equal([M1, M2]);
    expect(statuses.at(-1)).to.deep.equal({ state: "open", endpoint: M2 });
    expect(events).to.have.length(2);
    w.close();
  });

  it("any byte keeps a stream alive (a heartbeat every second never trips the idle limit); idleTimeoutMs sets it", async () => {
    let push: ((s: string) => void) | undefined;
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({ start: (ctrl) => void (push = (s) => ctrl.enqueue(enc.encode(s))) });
    const f = new FakeFetch().on(M1, () => ({ ...sseAnswer([]), body }));
    const clock = new ManualClock();
    const c = new HypercacheClient({ managementEndpoints: [M1], fetch: f.fetch, randomStart: false, runtime: { clock, timers: clock, random: fixed(0) } });
    const statuses: WatchStatus[] = [];
    const w = await c.watch({ onStatus: (s) => statuses.push(s), idleTimeoutMs: 3_000 });
    const ended = (async () => {
      for await (const _ of w) void _;
    })().catch((err: unknown) => err);
    await settle();
    for (let i = 0; i < 10; i++) {
      push?.(": keep-alive\n\n");
      await settle();
      clock.advance(2_999);
      await settle();
    }
    expect(downs(statuses)).to.have.length(0);
    clock.advance(1);
    await settle();
    expect(downs(statuses)[0]?.reason).to.equal("no data for 3000 ms");
    w.close();
    await ended;
  });

  it("a consumer slower than the idle limit over one event does not make a live stream look silent: only the wait for bytes is timed", async () => {
    let push: ((s: string) => void) | undefined;
    const enc = new TextEncoder();
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start: (ctrl) => void (push = (s) => (cancelled ? undefined : ctrl.enqueue(enc.encode(s)))),
      cancel: () => void (cancelled = true),
    });
    const f = new FakeFetch().on(M1, () => ({ ...sseAnswer([]), body })).on(M2, () => sseAnswer([]));
    const clock = new ManualClock();
    const c = new HypercacheClient({ managementEndpoints: [M1, M2], fetch: f.fetch, randomStart: false, runtime: { clock, timers: clock, random: fixed(0) } });
    const statuses: WatchStatus[] = [];
    const w = await c.watch({ onStatus: (s) => statuses.push(s) });
    let release: () => void = () => undefined;
    const busy = new Promise<void>((resolve) => (release = resolve));
    let seen = 0;
    const ended = (async () => {
      for await (const _ of w) if (++seen === 1) await busy;
    })().catch((err: unknown) => err);
    await settle();
    push?.(`event: heartbeat\ndata: {"n":1}\n\n`);
    await settle();
    // The node keeps sending every second while the consumer is busy with the first event.
    for (let i = 0; i < 6; i++) {
      push?.(`event: heartbeat\ndata: {"n":2}\n\n`);
      clock.advance(1000);
      await settle();
    }
    release();
    await settle();
    expect(downs(statuses), "the stream stays open").to.have.length(0);
    expect(cancelled, "the stream was not let go").to.equal(false);
    expect(f.order).to.deep.equal([M1]);
    expect(seen).to.be.above(1);
    w.close();
    await ended;
  });

  it("close() while waiting to reconnect ends the iteration and cancels the timer", async () => {
    const { clock, w, ended, statuses } = await watching(new FakeFetch());
    expect(downs(statuses)).to.have.length(1);
    w.close();
    expect(await ended).to.equal("ended");
    expect(clock.pending).to.equal(0);
  });
});
