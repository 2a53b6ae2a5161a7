// The pieces of `load` on their own: the line format, the line splitter over chunk boundaries,
// and the progress line printed every 5 s when stderr is not a terminal.
import { Readable } from "node:stream";
import { expect } from "chai";
import type { Io } from "../src/io.js";
import { parseLoadLine, readLines } from "../src/load/load-line.js";
import { PROGRESS_LINE_INTERVAL_MS, startProgress, type LoadCounters } from "../src/load/progress.js";

describe("load lines", () => {
  it("accepts the batch-put item format and refuses the rest with a reason", () => {
    const table: [string, unknown][] = [
      ['{"key":"a","value":"x"}', { item: { key: "a", value: "x" } }],
      ['{"key":"a","value":"AAE=","value_encoding":"base64","ttl_ms":5000}\r', { item: { key: "a", value: "AAE=", ttl: 5000, encoding: "base64" } }],
      ['{"key":"a","value":{"n":[1]},"ttl":"1m"}', { item: { key: "a", value: '{"n":[1]}', ttl: 60000 } }],
      ['{"key":"a","value":7}', { item: { key: "a", value: "7" } }],
      ["   ", { blank: true }],
      ["{oops", { error: "not JSON" }],
      ["[1]", { error: "expected an object, got an array" }],
      ['{"value":"x"}', { error: "`key` must be a non-empty string" }],
      ['{"key":"a"}', { error: "`value` is missing" }],
      ['{"key":"a","value":1,"value_encoding":"base64"}', { error: '`value_encoding` must be "base64" with a string value' }],
      ['{"key":"a","value":"x","ttl_ms":"5s"}', { error: "`ttl_ms` must be a number and `ttl` a duration string" }],
      ['{"key":"a","value":"x","ttl":"soon"}', { error: "invalid ttl" }],
      ['{"key":"a","value":"x","ttl_ms":0}', { error: "invalid ttl" }],
      // Before: ignored, so the line was loaded without its expiry or its condition.
      ['{"key":"a","value":"x","ttl":"1m","ttl_ms":5000}', { error: "`ttl` or `ttl_ms`, not both" }],
      ['{"key":"a","value":"x","ttlMs":5000}', { error: 'unknown member "ttlMs"; a load line takes key, value, value_encoding, ttl, ttl_ms' }],
      ['{"key":"a","value":"x","if_match":"*"}', { error: 'unknown member "if_match"' }],
    ];
    for (const [line, want] of table) {
      const got = parseLoadLine(line) as Record<string, unknown>;
      if ("error" in (want as object)) expect(String(got.error), line).to.contain((want as { error: string }).error);
      else expect(got, line).to.deep.equal(want);
    }
  });

  it("splits a byte stream into lines across chunk boundaries and multi-byte characters, counting bytes", async () => {
    const text = "a\nbé€\n\nlast";
    const bytes = Buffer.from(text);
    const chunks = [bytes.subarray(0, 3), bytes.subarray(3, 5), bytes.subarray(5, 9), bytes.subarray(9)];
    const progress = { bytes: 0 };
    const lines: string[] = [];
    for await (const l of readLines(Readable.from(chunks), progress)) lines.push(l);
    expect(lines).to.deep.equal(["a", "bé€", "", "last"]);
    expect(progress.bytes).to.equal(bytes.length);
  });
});

describe("load progress off a terminal", () => {
  it("prints a line with items, rate, failures and the share of the file every 5 s", () => {
    let tick: (() => void) | undefined;
    let every = 0;
    const err: string[] = [];
    let now = 1_000;
    const io = {
      stderr: { write: (s: string) => (err.push(s), true), isTTY: false },
      now: () => now,
      every: (ms: number, fn: () => void) => ((every = ms), (tick = fn), () => (tick = undefined)),
    } as unknown as Io;
    const c: LoadCounters = { bytes: 500, items: 3000, stored: 2990, failed: 10, badLines: 2 };
    const p = startProgress(io, c, 1000, 0);
    expect(every).to.equal(PROGRESS_LINE_INTERVAL_MS);
    now = 2_000;
    tick?.();
    expect(err).to.deep.equal(["hypercache: load: 3000 items, 1495 items/s, 2990 stored, 10 failed, 2 bad lines (50% of the file)\n"]);
    p.stop();
    expect(tick, "stop() cancels the timer").to.equal(undefined);
  });
});
