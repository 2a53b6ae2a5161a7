// The pieces of `load` on their own: the line format, the line splitter over chunk boundaries,
// and the progress line printed every 5 s when stderr is not a terminal.
import { Readable } from "node:stream";
import { expect } from "chai";
import type { Io } from "../src/io.js";
import { LINE_BYTES_MAX, parseLoadLine, readLines, type InputLine } from "../src/load/load-line.js";
import { PROGRESS_LINE_INTERVAL_MS, startProgress, type LoadCounters } from "../src/load/progress.js";

describe("load lines", () => {
  it("accepts the batch-put item format and refuses the rest with a reason", () => {
    const table: [string, unknown][] = [
      ['{"key":"a","value":"x"}', { item: { key: "a", value: "x" } }],
      ['{"key":"a","value":"AAE=","value_encoding":"base64","ttl_ms":5000}\r', { item: { key: "a", value: "AAE=", ttl: 5000, encoding: "base64" } }],
      ['{"key":"a","value":{"n":[1]},"ttl":"1m"}', { item: { key: "a", value: '{"n":[1]}', ttl: 60000 } }],
      ['{"key":"a","value":7}', { item: { key: "a", value: "7" } }],
      // Numbers as written, never re-serialised (before: 12345678901234567000, null, 1.1, "[1.1,0]").
      ['{"key":"a","value":12345678901234567890}', { item: { key: "a", value: "12345678901234567890" } }],
      ['{"key":"a","value":1e400}', { item: { key: "a", value: "1e400" } }],
      ['{ "value" : [ 1.10 , -0 ] , "key":"a"}', { item: { key: "a", value: "[1.10,-0]" } }],
      // The text between tokens is dropped, the text of strings kept as written; the last `value` wins, as in JSON.parse.
      ['{"key":"a","value":{"s":"a \\" b , } \\u00e9", "n" :\t2.50}}', { item: { key: "a", value: '{"s":"a \\" b , } \\u00e9","n":2.50}' } }],
      ['{"key":"a","value":1,"val\\u0075e":2.0}', { item: { key: "a", value: "2.0" } }],
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
    const lines: InputLine[] = [];
    for await (const l of readLines(Readable.from(chunks), progress)) lines.push(l);
    expect(lines).to.deep.equal(["a", "bé€", "", "last"].map((text) => ({ text })));
    expect(progress.bytes).to.equal(bytes.length);
  });

  /** The lines of `chunks`, split with a line cap of `max` bytes. */
  async function split(chunks: Buffer[], max?: number): Promise<InputLine[]> {
    const out: InputLine[] = [];
    for await (const l of readLines(Readable.from(chunks), { bytes: 0 }, max)) out.push(l);
    return out;
  }

  it("a line over the cap is a bad line, dropped up to the next newline; the lines around it come through", async () => {
    const long = Buffer.alloc(50, 0x78);
    const lines = await split([Buffer.from("ok1\n"), long.subarray(0, 20), long.subarray(20), Buffer.from("\nok2\n"), long, Buffer.from("tail")], 32);
    expect(lines).to.deep.equal([{ text: "ok1" }, { error: "a line over 32 bytes (skipped up to the next newline)" }, { text: "ok2" }, { error: "a line over 32 bytes (skipped up to the next newline)" }]);
    expect(LINE_BYTES_MAX, "a 16 MiB value as base64, and room for the rest").to.be.above((16 * 1024 * 1024 * 4) / 3);
  });

  it("a line that is not UTF-8 is a bad line (it was loaded with U+FFFD in place of its bytes); a byte order mark opening the stream is skipped", async () => {
    const lines = await split([Buffer.from("\uFEFF{\"a\":1}\n"), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), Buffer.from("caf\u00e9\n")]);
    expect(lines).to.deep.equal([{ text: '{"a":1}' }, { error: "not UTF-8 text" }, { text: "café" }]);
  });

  it("scans each byte once: an 8 MiB line in 8192 chunks of 1 KiB splits at once (each chunk re-scanned the whole line before: 128 s for 300 MiB)", async function () {
    this.timeout(5_000);
    const chunk = Buffer.alloc(1024, 0x61);
    const chunks = Array.from({ length: 8192 }, () => chunk);
    const started = performance.now();
    const lines = await split([...chunks, Buffer.from("\n")]);
    expect(lines).to.have.length(1);
    expect((lines[0] as { text: string }).text.length).to.equal(8 * 1024 * 1024);
    expect(performance.now() - started).to.be.below(2_000);
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
