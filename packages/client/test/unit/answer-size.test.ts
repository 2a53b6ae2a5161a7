// Answers are read up to a bound (maxAnswerBytes, default ANSWER_BYTES_MAX) above the largest a node
// sends: past it the attempt fails with a BadAnswerError before the body is held in memory, and the
// request moves on. A watch's event (or line) is bounded too: past WATCH_EVENT_BYTES_MAX the stream
// is dropped and the watch reconnects.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient } from "../../src/client.js";
import { WATCH_EVENT_BYTES_MAX } from "../../src/cluster-watch.js";
import { AllEndpointsFailedError, BadAnswerError } from "../../src/errors.js";
import { ANSWER_BYTES_MAX } from "../../src/failover-transport.js";
import type { ResponseLike } from "../../src/fetch-types.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, bytesAnswer, FakeFetch, settle } from "./fake-fetch.js";
import { lastDown, watchInBackground } from "./watch-harness.js";

const A = "http://a:1";
const B = "http://b:1";
const M1 = "http://m1:8081";

/** A value answer whose body comes in `chunks` of `size` bytes, without a Content-Length; counts what was pulled. */
function chunked(chunks: number, size: number): ResponseLike & { pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (pulled === chunks) return ctrl.close();
      pulled++;
      ctrl.enqueue(new Uint8Array(size));
    },
  });
  const never = new Promise<never>(() => undefined);
  return { ...answer(200, "", { "content-type": "application/octet-stream" }), body, arrayBuffer: () => never, pulled: () => pulled };
}

function client(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]> = {}) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints: [A, B], fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

describe("client answer size bound", () => {
  it("head of a value over maxAnswerBytes answers its metadata: a HEAD has no body, its Content-Length is the value's (it failed with a BadAnswerError)", async () => {
    const meta = { "Content-Length": String(5 * 1024 * 1024), "X-Cache-Version": "3", "X-Cache-Origin": "n1", "X-Cache-Last-Updated": "2026-01-01T00:00:00.000Z", "X-Cache-Owners": "n1", "X-Cache-Node": "n1" };
    const f = new FakeFetch().on(A, (call) => (call.init.method === "HEAD" ? answer(200, "", meta) : answer(200, "x".repeat(10), { ...meta, "Content-Length": String(5 * 1024 * 1024) })));
    const bounding = Object.assign((url: string, init: Parameters<typeof f.fetch>[1]) => f.fetch(url, init), { boundsAttempts: true as const });
    for (const fetch of [f.fetch, bounding]) {
      const c = client(f, { fetch, maxAnswerBytes: 1024 });
      expect(await c.head("k")).to.include({ key: "k", size: 5 * 1024 * 1024, version: 3 });
      // A GET of the same value is still bounded.
      const err = await c.get("k").catch((e: unknown) => e);
      expect((err as AllEndpointsFailedError).attempts[0]?.error).to.be.instanceOf(BadAnswerError);
    }
  });

  it("the default bound is above the largest legal answer (a batch get of 16 MiB of values, base64) and documented", () => {
    expect(ANSWER_BYTES_MAX).to.be.at.least(48 * 1024 * 1024);
  });

  it("an answer that declares more than maxAnswerBytes fails the attempt unread, and the request moves to the next endpoint", async () => {
    let read = false;
    const huge = { ...bytesAnswer(200, new Uint8Array(1), { "content-length": String(512 * 1024 * 1024) }), arrayBuffer: async () => ((read = true), new ArrayBuffer(1)) };
    const f = new FakeFetch().on(A, () => huge).on(B, () => bytesAnswer(200, new Uint8Array([7])));
    expect(await client(f).get("k")).to.deep.equal(new Uint8Array([7]));
    expect(read, "the big body is never read").to.equal(false);
  });

  it("a chunked answer is cut as soon as it passes maxAnswerBytes", async () => {
    const big = chunked(100, 1024);
    const f = new FakeFetch().on(A, () => big);
    const err = (await client(f, { endpoints: [A], maxAnswerBytes: 10 * 1024 }).get("k").catch((e: unknown) => e)) as AllEndpointsFailedError;
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect(err.last).to.be.instanceOf(BadAnswerError);
    expect(big.pulled()).to.be.at.most(12);
  });

  it("a compressed answer is bounded as decoded: its Content-Length, the compressed size, is not trusted (a 1 KB gzip of 100 KiB was read whole)", async () => {
    // What the platform fetch gives for a gzip answer: the encoding's headers, the decoded body.
    const big = chunked(100, 1024);
    const gzipped = { ...big, headers: { get: (n: string) => ({ "content-type": "application/octet-stream", "content-encoding": "gzip", "content-length": "1024" })[n.toLowerCase()] ?? null }, arrayBuffer: async () => new ArrayBuffer(100 * 1024) };
    const f = new FakeFetch().on(A, () => gzipped);
    const err = (await client(f, { endpoints: [A], maxAnswerBytes: 10 * 1024 }).get("k").catch((e: unknown) => e)) as AllEndpointsFailedError;
    expect(err).to.be.instanceOf(AllEndpointsFailedError);
    expect(err.last).to.be.instanceOf(BadAnswerError);
    expect(big.pulled()).to.be.at.most(12);
  });

  it("a chunked answer within the bound is read whole", async () => {
    const f = new FakeFetch().on(A, () => chunked(10, 1024));
    expect((await client(f, { endpoints: [A], maxAnswerBytes: 10 * 1024 }).get("k"))?.byteLength).to.equal(10 * 1024);
  });

  it("a watch line that never ends is dropped past WATCH_EVENT_BYTES_MAX and the watch reconnects", async () => {
    let pulled = 0;
    const endless = (): ResponseLike => {
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          pulled++;
          ctrl.enqueue(new TextEncoder().encode(pulled === 1 ? "data: " : "x".repeat(256 * 1024)));
        },
      });
      return { ...answer(200, "", { "content-type": "text/event-stream" }), body };
    };
    const { w, statuses } = await watchInBackground(new FakeFetch().on(M1, endless), [M1]);
    for (let i = 0; i < 20 && !lastDown(statuses); i++) await settle();
    expect(lastDown(statuses)?.error).to.be.instanceOf(BadAnswerError);
    expect(pulled * 256 * 1024).to.be.at.most(WATCH_EVENT_BYTES_MAX + 2 * 256 * 1024);
    w.close();
  });
});
