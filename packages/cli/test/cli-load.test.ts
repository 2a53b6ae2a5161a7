// hypercache load against a real node: streaming batches, bad lines by number, --errors-out that
// loads again, exit codes, Ctrl-C; and the terminal progress bar and summary under tmux.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { expect } from "chai";
import { HypercacheClient } from "@hypercache/client/node";
import { startNode, type NodeProcess } from "../../../test/helpers/node-process.js";
import { LINE_BYTES_MAX } from "../src/load/load-line.js";
import { CLI_BIN, cli } from "./cli-harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const line = (i: number) => JSON.stringify({ key: `item:${i}`, value: `value-${i}-${"x".repeat(80)}` });

function writeItems(path: string, n: number, extra: (i: number) => string | undefined = () => undefined): void {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(extra(i) ?? line(i));
  writeFileSync(path, `${lines.join("\n")}\n`);
}

describe("hypercache load (one real node)", function () {
  this.timeout(60_000);
  let node: NodeProcess;
  let dir: string;
  let env: Record<string, string>;
  let client: HypercacheClient;

  before(async () => {
    node = await startNode({ id: "l1" });
    dir = mkdtempSync(join(tmpdir(), "hypercache-load-"));
    env = { HYPERCACHE_ENDPOINTS: node.api };
    client = new HypercacheClient({ endpoints: [node.api], discovery: false });
  });
  after(async () => {
    await client?.close();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads every item in batches and prints a JSON summary, exit code 0", async () => {
    const file = join(dir, "ok.jsonl");
    writeFileSync(file, [line(0), JSON.stringify({ key: "j", value: { nested: [1, 2] }, ttl: "1h" }), JSON.stringify({ key: "b64", value: Buffer.from([0, 255]).toString("base64"), value_encoding: "base64", ttl_ms: 60000 }), "", line(3)].join("\r\n"));
    const r = await cli(["load", file, "--batch-size", "2"], { env });
    expect(r.code).to.equal(0);
    expect(r.json()).to.include({ items: 4, stored: 4, failed: 0, bad_lines: 0, interrupted: false });
    expect(await client.getText("j")).to.equal('{"nested":[1,2]}');
    expect(await client.get("b64")).to.deep.equal(new Uint8Array([0, 255]));
    expect((await client.getItem("b64"))?.ttlMs).to.be.within(50_000, 60_000);
    expect(await client.getText("item:3")).to.equal(`value-3-${"x".repeat(80)}`);
  });

  it("reports bad lines by number, stores the rest, writes refused items to --errors-out, and exits 6", async () => {
    const file = join(dir, "mixed.jsonl");
    const tooLongKey = JSON.stringify({ key: "k".repeat(5000), value: "v" });
    writeItems(file, 2500, (i) => (i === 10 ? "{not json" : i === 20 ? '{"key": 5, "value": "x"}' : i === 30 ? '{"key":"a"}' : i === 1500 ? tooLongKey : undefined));
    const errorsOut = join(dir, "errors.jsonl");
    const r = await cli(["load", file, "--errors-out", errorsOut], { env });
    expect(r.code).to.equal(6);
    expect(r.json()).to.include({ items: 2497, stored: 2496, failed: 1, bad_lines: 3, errors_out: errorsOut });
    expect(r.stderr).to.contain("line 11: not JSON").and.contain("line 21: `key` must be a non-empty string").and.contain("line 31: `value` is missing");
    expect(r.stderr).to.match(/first failure: key is longer than/i);
    expect(readFileSync(errorsOut, "utf8")).to.equal(`${tooLongKey}\n`);
    const again = await cli(["load", errorsOut], { env });
    expect(again.json(), "the errors file is valid input").to.include({ items: 1, bad_lines: 0, failed: 1 });
    expect((await client.getMany(["item:0", "item:2499", "item:1500"])).map((x) => x.found)).to.deep.equal([true, true, false]);
  });

  it("cuts batches by body size too: 100 items of 200 KB are all stored (in one batch of 20 MB they were all refused 413)", async () => {
    const file = join(dir, "large.jsonl");
    writeItems(file, 100, (i) => JSON.stringify({ key: `large:${i}`, value: String(i % 10).repeat(200_000) }));
    const r = await cli(["load", file], { env });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.json()).to.include({ items: 100, stored: 100, failed: 0 });
    expect(await client.getText("large:99")).to.equal("9".repeat(200_000));
  });

  it("an item alone over the batch body bound fails alone, with a message saying so; the lines around it are stored", async () => {
    const file = join(dir, "one-huge.jsonl");
    const huge = JSON.stringify({ key: "huge", value: "h".repeat(16 * 1024 * 1024) });
    writeFileSync(file, [line(40), huge, line(41)].join("\n"));
    const errorsOut = join(dir, "huge-errors.jsonl");
    const r = await cli(["load", file, "--errors-out", errorsOut], { env });
    expect(r.code).to.equal(6);
    expect(r.json()).to.include({ items: 3, stored: 2, failed: 1, bad_lines: 0 });
    expect(r.stderr).to.match(/first failure: the item is \d+ bytes of JSON, over the client's batch body bound/);
    expect(readFileSync(errorsOut, "utf8")).to.equal(`${huge}\n`);
    expect((await client.getMany(["item:40", "item:41"])).map((x) => x.found)).to.deep.equal([true, true]);
  });

  it("a line over the line cap and a line that is not UTF-8 are bad lines, reported by number; the valid lines of the same batch are stored", async () => {
    const file = join(dir, "bad-bytes.jsonl");
    const notUtf8 = Buffer.concat([Buffer.from('{"key":"latin1","value":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const overCap = Buffer.concat([Buffer.from('{"key":"long","value":"'), Buffer.alloc(LINE_BYTES_MAX, 0x6c), Buffer.from('"}')]);
    writeFileSync(file, Buffer.concat([Buffer.from(`${line(50)}\n`), notUtf8, Buffer.from(`\n${line(51)}\n`), overCap, Buffer.from(`\n${line(52)}\n`)]));
    const r = await cli(["load", file], { env });
    expect(r.code).to.equal(6);
    expect(r.json()).to.include({ items: 3, stored: 3, failed: 0, bad_lines: 2 });
    expect(r.stderr).to.contain("line 2: not UTF-8 text").and.contain(`line 4: a line over ${LINE_BYTES_MAX} bytes`);
    expect((await client.getMany(["item:50", "item:51", "item:52", "latin1", "long"])).map((x) => x.found)).to.deep.equal([true, true, true, false, false]);
  });

  it("an --errors-out path that cannot be written is a usage error (exit 2, one line) before anything is loaded: a missing directory, a directory", async () => {
    const file = join(dir, "errors-out-cases.jsonl");
    writeItems(file, 3, (i) => JSON.stringify({ key: `errors-out-case:${i}`, value: "v" }));
    for (const bad of [join(dir, "no-such-dir", "failed.jsonl"), dir]) {
      const r = await cli(["load", file, "--errors-out", bad], { env });
      expect(r.code, bad).to.equal(2);
      expect(r.stderr.trim().split("\n"), bad).to.have.length(1);
      expect(r.stderr).to.match(/--errors-out: cannot write/);
      expect(r.stderr).to.not.match(/\bat \w+ \(/);
    }
    expect(await client.get("errors-out-case:0"), "nothing was loaded").to.equal(undefined);
  });

  it("load FILE --errors-out FILE (reloading a failed-lines file onto itself) is a usage error that leaves the input as it was", async () => {
    const file = join(dir, "failed.jsonl");
    const lines = '{"key":"re:1","value":"one"}\n{"key":"re:2","value":"two"}\n';
    writeFileSync(file, lines);
    // Before: --errors-out was opened for writing (truncated) before the input was read: 0 items, exit 0, the file emptied.
    const r = await cli(["--json", "load", file, "--errors-out", file], { env });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.match(/--errors-out .* is the input file/);
    expect(readFileSync(file, "utf8"), "the input left as it was").to.equal(lines);
    // The same file under another name (a symbolic link) is refused too.
    const link = join(dir, "failed-link.jsonl");
    symlinkSync(file, link);
    expect((await cli(["load", file, "--errors-out", link], { env })).code).to.equal(2);
    expect(readFileSync(file, "utf8")).to.equal(lines);
    expect(await client.get("re:1"), "nothing was loaded").to.equal(undefined);
  });

  it("stores a non-string JSON value as its JSON text as written, not a lossy re-serialisation (big integers, 1e400, 1.10)", async () => {
    const file = join(dir, "numbers.jsonl");
    writeFileSync(file, '{"key":"num:big","value":12345678901234567890}\n{"key":"num:huge","value":1e400}\n{"key":"num:obj","value": {"a": [1.10, 2e-0], "s": "x y"}}\n');
    const r = await cli(["--json", "load", file], { env });
    expect(r.code, r.stderr).to.equal(0);
    // Before: 12345678901234567000, null and {"a":[1.1,2],"s":"x y"}.
    expect(await client.getText("num:big")).to.equal("12345678901234567890");
    expect(await client.getText("num:huge")).to.equal("1e400");
    expect(await client.getText("num:obj")).to.equal('{"a":[1.10,2e-0],"s":"x y"}');
  });

  it("reads standard input with '-'", async () => {
    const r = await cli(["load", "-"], { env, stdin: `${line(9000)}\n${line(9001)}\n` });
    expect(r.json()).to.include({ items: 2, stored: 2 });
  });

  it("exits 5 when no endpoint answers, every item counted as failed", async () => {
    const file = join(dir, "few.jsonl");
    writeItems(file, 5);
    const r = await cli(["load", file], { env: { HYPERCACHE_ENDPOINTS: "http://127.0.0.1:1" } });
    expect(r.code).to.equal(5);
    expect(r.json()).to.include({ items: 5, stored: 0, failed: 5 });
  });

  it("on Ctrl-C stops reading, finishes the batches in flight, prints the summary and exits 130", async () => {
    const file = join(dir, "big.jsonl");
    writeItems(file, 200_000);
    const r = await cli(["load", file, "--batch-size", "500"], { env, onStart: (interrupt) => setTimeout(interrupt, 700) });
    expect(r.code).to.equal(130);
    const s = r.json<{ items: number; stored: number; failed: number; interrupted: boolean }>();
    expect(s.interrupted).to.equal(true);
    expect(s.items).to.be.greaterThan(0).and.below(200_000);
    expect(s.stored + s.failed, "every item sent was accounted for").to.equal(s.items);
    expect(s.items % 500, "only whole batches were sent").to.equal(0);
  });

  it("load - with a producer that pauses: Ctrl-C stops reading at once, prints the summary and exits 130 (not at the next line)", async () => {
    const stdin = new PassThrough();
    stdin.write(`${line(9100)}\n`);
    let interrupt = () => undefined as void;
    const run = cli(["--json", "load", "-"], { env, stdin, onStart: (i) => (interrupt = i) });
    await sleep(500);
    interrupt();
    // Before: the flag was looked at only when the next line came, so the load waited for stdin.
    const r = await Promise.race([run, sleep(5_000).then(() => "timeout" as const)]);
    stdin.end();
    await run;
    expect(r, "no exit within 5 s of Ctrl-C while stdin stayed open").to.not.equal("timeout");
    if (r === "timeout") return;
    expect(r.code, r.stderr).to.equal(130);
    expect(r.json()).to.include({ interrupted: true });
  });
});

describe("hypercache load on a terminal (tmux)", function () {
  this.timeout(90_000);
  const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
  let node: NodeProcess;
  let dir: string;
  const session = `hc-load-${process.pid}`;

  before(async function () {
    if (!hasTmux) throw new Error("tmux is missing: apt-get install -y tmux");
    node = await startNode({ id: "t1" });
    dir = mkdtempSync(join(tmpdir(), "hypercache-tmux-"));
  });
  after(async () => {
    spawnSync("tmux", ["kill-session", "-t", session]);
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pane = () => execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
  async function until(what: string, ok: (text: string) => boolean, ms = 60_000): Promise<string> {
    const end = Date.now() + ms;
    for (;;) {
      const text = pane();
      if (ok(text)) return text;
      if (Date.now() > end) throw new Error(`pane never showed ${what}:\n${text}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("leaves the bar at 100% and the summary on the terminal when a load completes", async () => {
    const file = join(dir, "small.jsonl");
    writeItems(file, 20_000);
    const cmd = `HYPERCACHE_ENDPOINTS=${node.api} ${process.execPath} ${CLI_BIN} load ${file}; echo "EXIT=$?"; sleep 60`;
    execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "160", "-y", "20", cmd]);
    const end = await until("the summary", (t) => t.includes("EXIT="));
    spawnSync("tmux", ["kill-session", "-t", session]);
    expect(end).to.match(/load .*100% \| 20000 items \| \d+ items\/s \| 0 failed \| 0 bad lines \| ETA 0s/);
    expect(end).to.match(/done: 20000 of 20000 items stored in [\d.]+ s/);
    expect(end).to.contain("EXIT=0");
  });

  it("shows the progress bar (items/s, ETA, failures) and the summary; Ctrl-C ends with the summary and exit 130", async () => {
    const file = join(dir, "items.jsonl");
    writeItems(file, 300_000, (i) => (i === 5 ? "oops" : undefined));
    const cmd = `HYPERCACHE_ENDPOINTS=${node.api} ${process.execPath} ${CLI_BIN} load ${file} --batch-size 200 --concurrency 1; echo "EXIT=$?"`;
    execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "160", "-y", "20", cmd]);
    execFileSync("tmux", ["set-option", "-t", session, "remain-on-exit", "on"]);
    const during = await until("the bar", (t) => /load .*\d+% \| \d+ items \| \d+ items\/s \| 0 failed \| 1 bad lines \| ETA/.test(t));
    expect(during).to.contain("line 6: not JSON");
    execFileSync("tmux", ["send-keys", "-t", session, "C-c"]);
    const end = await until("the summary", (t) => t.includes("EXIT="));
    expect(end).to.match(/interrupted: \d+ of \d+ items stored in [\d.]+ s \(\d+ items\/s\), 0 failed, 1 bad lines/);
    expect(end).to.contain("EXIT=130");
  });
});

describe("hypercache load backpressure (the binary against a stub that holds its answers)", function () {
  this.timeout(60_000);

  it("reads no further than the batches in flight allow while the node does not answer, then loads everything", async () => {
    // A loopback stand-in for a node: batch puts are held until released, then stored.
    let held: (() => void)[] = [];
    let released = false;
    let requests = 0;
    let stored = 0;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        requests++;
        const { items } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { items: { key: string }[] };
        const answer = () => {
          stored += items.length;
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ results: items.map((it) => ({ key: it.key, status: 200, stored: true, bytes: 1, owners: ["stub"] })) }));
        };
        if (released) answer();
        else held.push(answer);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const total = 50_000;
    const child = spawn(process.execPath, [CLI_BIN, "load", "-", "--batch-size", "1000", "--concurrency", "2"], { env: { PATH: process.env.PATH ?? "", HYPERCACHE_ENDPOINTS: endpoint }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    const exited = new Promise<number | null>((r) => child.on("close", r));
    let stdinError: Error | undefined;
    child.stdin.on("error", (err) => (stdinError = err)); // EPIPE once the child is gone
    // Writes lines while the pipe takes them; `written` is how far the CLI let the test get.
    let written = 0;
    const feed = async () => {
      while (written < total && !stdinError) {
        const ok = child.stdin.write(`${line(written)}\n`);
        written++;
        if (!ok) await new Promise((r) => (child.stdin.once("drain", r), child.stdin.once("close", r)));
      }
      child.stdin.end();
    };
    const feeding = feed();
    try {
      const end = Date.now() + 20_000;
      while (requests < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 1000));
      expect(requests, "batches in flight: --concurrency").to.equal(2);
      // 2 batches in flight, one being filled, and what the pipe and the stream buffers hold
      // (about 300 KB of 100-byte lines): far from the 50,000 lines of the input.
      expect(written, "lines the CLI let the writer put into the pipe").to.be.below(8000);
      released = true;
      for (const answer of held) answer();
      held = [];
      await feeding;
      expect(await exited).to.equal(0);
      expect(JSON.parse(stdout)).to.include({ items: total, stored: total, failed: 0 });
      expect(stored).to.equal(total);
    } finally {
      child.kill("SIGKILL");
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
