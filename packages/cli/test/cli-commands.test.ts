// Every hypercache command against a real node: output (JSON when stdout is not a terminal, text
// on one), exit codes, the one-line errors, credentials and global flags before or after the command.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { makeTestCerts, type TestCerts } from "../../../test/helpers/certs.js";
import { startNode, type NodeProcess } from "../../../test/helpers/node-process.js";
import { CLI_BIN, cli, cliProcess } from "./cli-harness.js";

const DEAD = "http://127.0.0.1:1";

describe("hypercache CLI commands (one real node)", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  let env: Record<string, string>;
  let dir: string;

  before(async () => {
    node = await startNode({ id: "c1" });
    env = { HYPERCACHE_ENDPOINTS: node.api, HYPERCACHE_MGMT_ENDPOINTS: node.mgmt };
    dir = mkdtempSync(join(tmpdir(), "hypercache-cli-"));
  });
  after(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("set prints the put result as JSON and exits 0; get prints the item; a TTL is a duration", async () => {
    const set = await cli(["set", "greeting", "héllo", "--ttl", "5m"], { env });
    expect(set.code).to.equal(0);
    expect(set.json()).to.include({ key: "greeting", stored: true, bytes: 6, node: "c1" });
    const get = await cli(["get", "greeting"], { env });
    expect(get.code).to.equal(0);
    const item = get.json<{ value: string; value_encoding: string; ttl_ms: number; owners: string[] }>();
    expect(item).to.include({ value: "héllo", value_encoding: "utf8" });
    expect(item.ttl_ms).to.be.within(290_000, 300_000);
  });

  it("prints text on a terminal: the value for get, a sentence for set", async () => {
    await cli(["set", "t", "plain text"], { env });
    const get = await cli(["get", "t"], { env, tty: true });
    expect(get.stdout).to.equal("plain text\n");
    const set = await cli(["set", "t", "x"], { env, tty: true });
    expect(set.stdout).to.match(/stored.* t \(1 bytes\) via c1/);
    const me = await cli(["me"], { env, tty: true });
    expect(me.stdout).to.match(/anonymous[\s\S]*scopes: read write admin/);
  });

  it("get on a terminal does not print a value's control characters raw, C1 (U+009B CSI) included; JSON gives such a value as base64", async () => {
    for (const value of ["before\u009b2Jafter", "bell\u0007", "del\u007f"]) {
      await cli(["set", "ctl", value], { env });
      const r = await cli(["get", "ctl"], { env: { ...env, NO_COLOR: "1" }, tty: true });
      expect(r.code).to.equal(0);
      // Before: C1 passed (only C0 and DEL were looked for), so U+009B reached the terminal.
      const controls = [...r.stdout.slice(0, -1)].filter((ch) => ch.charCodeAt(0) < 0x20 || (ch.charCodeAt(0) >= 0x7f && ch.charCodeAt(0) <= 0x9f));
      expect(controls, "a control character reached the terminal").to.deep.equal([]);
      expect(r.stdout).to.match(/bytes of binary data: use --out FILE/);
      const json = (await cli(["get", "ctl"], { env })).json<{ value: string; value_encoding: string }>();
      expect(json.value_encoding).to.equal("base64");
      expect(Buffer.from(json.value, "base64").toString("utf8")).to.equal(value);
    }
  });

  it("get of a missing key exits 3 with one stderr line naming status, code, endpoint and a hint", async () => {
    const r = await cli(["get", "no-such-key"], { env });
    expect(r.code).to.equal(3);
    expect(r.stdout).to.equal("");
    expect(r.stderr.trim().split("\n")).to.have.length(1);
    expect(r.stderr).to.contain("404 NOT_FOUND").and.contain(node.api).and.contain("hint:");
  });

  it("exits 1 when the node refuses the request for another reason (400), with one stderr line and the endpoint not given up on", async () => {
    const r = await cli(["-v", "set", "k".repeat(5000), "v"], { env: { ...env, HYPERCACHE_ENDPOINTS: `${node.api},${DEAD}` } });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal("");
    const lines = r.stderr.trim().split("\n");
    expect(lines, "a 4xx is no failover: -v has nothing to print").to.have.length(1);
    expect(lines[0]).to.contain("400 BAD_REQUEST").and.contain(node.api).and.contain("hint:");
  });

  it("del exits 0 when the key existed and 3 when it did not", async () => {
    await cli(["set", "gone", "x"], { env });
    const first = await cli(["del", "gone"], { env });
    expect(first.code).to.equal(0);
    expect(first.json()).to.include({ deleted: true, bytes: 1 });
    const second = await cli(["del", "gone"], { env });
    expect(second.code).to.equal(3);
    expect(second.json()).to.include({ deleted: false });
  });

  it("conditional set and del: --if-match with the ETag get prints (quoted or not), --if-none-match; a condition that fails exits 7 and changes nothing", async () => {
    const created = await cli(["set", "cas", "v1", "--if-none-match"], { env });
    expect(created.code).to.equal(0);
    const etag = created.json<{ etag: string }>().etag;
    expect(etag).to.match(/^".+"$/);
    expect((await cli(["get", "cas"], { env })).json()).to.include({ etag });
    const again = await cli(["set", "cas", "v2", "--if-none-match"], { env });
    expect(again.code).to.equal(7);
    expect(again.stderr).to.contain("412 PRECONDITION_FAILED").and.contain("hint:");
    const stale = await cli(["set", "cas", "v2", "--if-match", '"not-it"'], { env });
    expect(stale.code).to.equal(7);
    const unquoted = await cli(["set", "cas", "v2", "--if-match", etag.slice(1, -1)], { env });
    expect(unquoted.code, unquoted.stderr).to.equal(0);
    const next = unquoted.json<{ etag: string }>().etag;
    expect((await cli(["del", "cas", "--if-match", etag], { env })).code).to.equal(7);
    expect((await cli(["get", "cas"], { env })).json()).to.include({ value: "v2" });
    expect((await cli(["del", "cas", "--if-match", next], { env })).code).to.equal(0);
    expect((await cli(["set", "cas", "v", "--if-match", " "], { env })).code).to.equal(2);
  });

  it("incr prints the counter's value; delta, --initial and --idempotency-key; a value that is not a number exits 1 with CONFLICT", async () => {
    const tty = await cli(["incr", "visits"], { env, tty: true });
    expect(tty.code).to.equal(0);
    expect(tty.stdout.trim()).to.equal("1");
    const json = await cli(["incr", "visits", "5"], { env });
    expect(json.json()).to.include({ key: "visits", value: 6, applied_by: "c1" });
    expect((await cli(["incr", "fresh", "--initial", "10", "--", "-2"], { env })).json()).to.include({ value: 8 });
    const first = await cli(["incr", "visits", "--idempotency-key", "order-1"], { env });
    const retry = await cli(["incr", "visits", "--idempotency-key", "order-1"], { env });
    expect(retry.json()).to.include({ value: first.json<{ value: number }>().value });
    expect((await cli(["get", "visits"], { env })).json()).to.include({ value: "7" });
    await cli(["set", "word", "abc"], { env });
    const conflict = await cli(["incr", "word"], { env });
    expect(conflict.code).to.equal(1);
    expect(conflict.stderr).to.contain("409 CONFLICT");
    expect((await cli(["incr", "visits", "1.5"], { env })).code).to.equal(2);
  });

  it("touch sets or removes the expiry of a live item; a missing key exits 3; it needs exactly one of --ttl and --persist", async () => {
    await cli(["set", "ttl-me", "x"], { env });
    const t = await cli(["touch", "ttl-me", "--ttl", "1h"], { env });
    expect(t.code, t.stderr).to.equal(0);
    expect(t.json<{ expires_at?: string }>().expires_at).to.be.a("string");
    const p = await cli(["touch", "ttl-me", "--persist"], { env });
    expect(p.json<{ expires_at?: string }>().expires_at).to.equal(undefined);
    expect((await cli(["touch", "no-such-key", "--ttl", "1m"], { env })).code).to.equal(3);
    expect((await cli(["touch", "ttl-me"], { env })).code).to.equal(2);
    expect((await cli(["touch", "ttl-me", "--ttl", "1m", "--persist"], { env })).code).to.equal(2);
  });

  it("set reads --file and standard input; get --out writes the exact bytes", async () => {
    const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256));
    const src = join(dir, "in.bin");
    writeFileSync(src, bytes);
    expect((await cli(["set", "bin", "--file", src], { env })).code).to.equal(0);
    const dst = join(dir, "out.bin");
    const got = await cli(["get", "bin", "--out", dst], { env });
    expect(got.code).to.equal(0);
    expect(readFileSync(dst).equals(bytes)).to.equal(true);
    expect((await cli(["get", "bin", "--out", "-"], { env })).stdoutBytes.equals(bytes)).to.equal(true);
    expect((await cli(["set", "piped"], { env, stdin: bytes })).code).to.equal(0);
    expect((await cli(["get", "piped", "--out", "-"], { env })).stdoutBytes.equals(bytes)).to.equal(true);
    const asJson = (await cli(["get", "bin"], { env })).json<{ value: string; value_encoding: string }>();
    expect(asJson.value_encoding).to.equal("base64");
    expect(Buffer.from(asJson.value, "base64").equals(bytes)).to.equal(true);
  });

  it("keys lists every matching key as JSON (a prefix or a glob), one per line on a terminal", async () => {
    for (const k of ["user:1", "user:2", "user:10", "other"]) await cli(["set", k, "v"], { env });
    const r = await cli(["keys", "user:"], { env });
    expect(r.code).to.equal(0);
    expect(r.json()).to.deep.equal({ keys: ["user:1", "user:10", "user:2"], count: 3, truncated: false, partial_nodes: [] });
    const glob = await cli(["keys", "user:?", "--max", "1"], { env });
    expect(glob.json()).to.include({ count: 1, truncated: true });
    const tty = await cli(["keys", "user:1"], { env, tty: true });
    expect(tty.stdout).to.equal("user:1\nuser:10\n");
  });

  it("get --out to a path that cannot be written is a usage error (exit 2), as set --file of a missing file is", async () => {
    expect((await cli(["set", "out-case", "v"], { env })).code).to.equal(0);
    const r = await cli(["get", "out-case", "--out", "/nonexistent-dir/x"], { env });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/--out \/nonexistent-dir\/x: ENOENT/);
    expect((await cli(["set", "out-case", "--file", "/nonexistent-dir/x"], { env })).code).to.equal(2);
  });

  it("keys on a terminal prints a key with control characters as a JSON string: a key's escape sequences never reach the terminal", async () => {
    const evil = "evil\u001b]0;PWNED\u0007\u001b[2J\u009b1m\nnext";
    expect((await cli(["set", evil, "v"], { env })).code).to.equal(0);
    const tty = await cli(["keys", "evil"], { env, tty: true });
    expect(tty.stdout).to.equal(`${JSON.stringify(evil).replace("\u009b", "\\u009b")}\n`);
    const controls = [...tty.stdout.slice(0, -1)].filter((ch) => ch.charCodeAt(0) < 0x20 || (ch.charCodeAt(0) >= 0x7f && ch.charCodeAt(0) <= 0x9f));
    expect(controls, "no control character printed").to.deep.equal([]);
    expect((await cli(["keys", "evil"], { env })).json(), "JSON output keeps the key as it is").to.include({ count: 1 });
  });

  it("owners, me and members print the answers as JSON", async () => {
    expect((await cli(["owners", "user:1"], { env })).json()).to.deep.equal({ key: "user:1", owners: ["c1"] });
    expect((await cli(["me"], { env })).json()).to.include({ id: "anonymous" });
    const m = await cli(["members"], { env });
    expect(m.code).to.equal(0);
    expect(m.json<{ members: { id: string }[] }>().members.map((x) => x.id)).to.deep.equal(["c1"]);
    const table = await cli(["members"], { env, tty: true });
    expect(table.stdout).to.match(/NODE\s+ADDRESS\s+STATE/).and.match(/c1\*\s+127\.0\.0\.1:\d+\s+.*alive/);
  });

  it("watch prints one JSON event per line and stops after --count", async () => {
    const r = await cli(["watch", "--count", "2"], { env });
    expect(r.code).to.equal(0);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { type: string; endpoint: string });
    expect(events.map((e) => e.type)).to.deep.equal(["members", "heartbeat"]);
    expect(events[0]?.endpoint).to.equal(node.mgmt);
  });

  it("watch ends with exit code 130 on Ctrl-C", async () => {
    const r = await cli(["watch", "--events", "members"], { env, onStart: (interrupt) => setTimeout(interrupt, 1500) });
    expect(r.code).to.equal(130);
    expect(r.stdout.trim().split("\n")).to.have.length(1);
  });

  it("watch --events with an unknown name (a typo) is a usage error, not a silent watch that never prints or ends", async () => {
    for (const events of ["member", "members,heartbeats", ""]) {
      const r = await Promise.race([cli(["watch", "--events", events, "--count", "1"], { env }), new Promise<"timeout">((ok) => setTimeout(() => ok("timeout"), 4_000))]);
      expect(r, `watch --events ${JSON.stringify(events)} --count 1 was still running after 4 s with no output`).to.not.equal("timeout");
      if (r === "timeout") return;
      expect(r.code, events).to.equal(2);
      expect(r.stderr, events).to.contain("--events").and.contain("members, heartbeat");
    }
  });

  it("takes global flags before or after the command, and --endpoints over the environment", async () => {
    const before = await cli(["--endpoints", node.api, "get", "greeting"], { env: {} });
    const after = await cli(["get", "greeting", "--endpoints", node.api], { env: { HYPERCACHE_ENDPOINTS: DEAD } });
    expect(before.code).to.equal(0);
    expect(after.code).to.equal(0);
  });

  it("tries every listed endpoint in turn before discovery: a dead first endpoint costs one attempt, shown by -v", async () => {
    const r = await cli(["-v", "get", "greeting"], { env: { HYPERCACHE_ENDPOINTS: `${DEAD},${node.api}` } });
    expect(r.code).to.equal(0);
    const lines = r.stderr.trim().split("\n");
    expect(lines).to.deep.equal([`hypercache: failover: ${DEAD} failed (connect ECONNREFUSED 127.0.0.1:1), trying ${node.api}`]);
  });

  it("exits 5 with the attempts on one line when no endpoint answers", async () => {
    const r = await cli(["get", "k"], { env: { HYPERCACHE_ENDPOINTS: `${DEAD},http://127.0.0.1:2` } });
    expect(r.code).to.equal(5);
    expect(r.stderr.trim().split("\n")).to.have.length(1);
    expect(r.stderr).to.match(/all endpoints failed: http:\/\/127\.0\.0\.1:1 .*ECONNREFUSED.*; http:\/\/127\.0\.0\.1:2 .*hint:/);
  });

  it("exits 2 on usage errors: missing argument, unknown flag, bad duration, bad consistency, a --timeout past 2^31 - 1 ms", async () => {
    // 1000h: before, Node's timers clamped it to 1 ms and every attempt failed (exit 5).
    for (const argv of [["get"], ["get", "k", "--nope"], ["set", "k", "v", "--ttl", "5"], ["get", "k", "--consistency", "most"], ["frobnicate"], [], ["--timeout", "1000h", "get", "greeting"]]) {
      const r = await cli(argv, { env });
      expect(r.code, argv.join(" ")).to.equal(2);
      expect(r.stderr, argv.join(" ")).to.not.equal("");
    }
    expect((await cli(["--help"], { env })).code).to.equal(0);
  });

  it("exits 6 from keys when a node's listing was missing (partial result)", async () => {
    const stub = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: ["a"], next_cursor: "", total_matched: 1, truncated: false, node: "s1", partial_nodes: ["s3"] }));
    });
    await new Promise<void>((r) => stub.listen(0, "127.0.0.1", r));
    try {
      const r = await cli(["keys"], { env: { HYPERCACHE_ENDPOINTS: `http://127.0.0.1:${(stub.address() as AddressInfo).port}` } });
      expect(r.code).to.equal(6);
      expect(r.json()).to.deep.include({ partial_nodes: ["s3"] });
      expect(r.stderr).to.contain("partial result").and.contain("s3");
    } finally {
      stub.close();
    }
  });

  it("the installed binary exits with the command's code and writes exact bytes to a pipe", async () => {
    const bytes = Buffer.from([0, 1, 2, 254, 255, 10, 13, 0]);
    const set = await cliProcess(["set", "raw"], { env, stdin: bytes });
    expect(set.code).to.equal(0);
    const get = await cliProcess(["get", "raw", "--out", "-"], { env });
    expect(get.code).to.equal(0);
    expect(get.stdout.equals(bytes)).to.equal(true);
    expect((await cliProcess(["get", "nope"], { env })).code).to.equal(3);
  });
});

describe("hypercache CLI credentials (real node with a policy file)", function () {
  this.timeout(30_000);
  let node: NodeProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-cli-auth-"));
    const policy = join(dir, "policy.yaml");
    writeFileSync(policy, [
      "tokens:",
      "  - {id: reader, token: tok-reader, scopes: [read]}",
      "  - {id: full, token: tok-full, scopes: [read, write, admin]}",
      "users:",
      `  - {username: alice, password_hash: "${bcrypt.hashSync("alice-pw", 4)}", scopes: [read, write]}`,
      "allow_basic_without_tls: true",
    ].join("\n"));
    node = await startNode({ id: "a1", env: { SERVICE_AUTH_CONFIG: policy } });
  });
  after(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("uses --token or HYPERCACHE_TOKEN", async () => {
    expect((await cli(["me", "--token", "tok-full"], { env: { HYPERCACHE_ENDPOINTS: node.api } })).json()).to.include({ id: "full" });
    expect((await cli(["me"], { env: { HYPERCACHE_ENDPOINTS: node.api, HYPERCACHE_TOKEN: "tok-reader" } })).json()).to.include({ id: "reader" });
  });

  it("exits 4 on 401 and 403 with the status and code on stderr", async () => {
    const none = await cli(["get", "k"], { env: { HYPERCACHE_ENDPOINTS: node.api } });
    expect(none.code).to.equal(4);
    expect(none.stderr).to.contain("401 UNAUTHORIZED");
    const reader = await cli(["set", "k", "v"], { env: { HYPERCACHE_ENDPOINTS: node.api, HYPERCACHE_TOKEN: "tok-reader" } });
    expect(reader.code).to.equal(4);
    expect(reader.stderr).to.contain("403 FORBIDDEN").and.contain("hint:");
  });

  it("--user takes the password from HYPERCACHE_PASSWORD, never from argv, and refuses plain http without --insecure-basic", async () => {
    const refused = await cli(["me", "--user", "alice"], { env: { HYPERCACHE_ENDPOINTS: node.api, HYPERCACHE_PASSWORD: "alice-pw" } });
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain("plain http");
    const ok = await cli(["me", "--user", "alice", "--insecure-basic"], { env: { HYPERCACHE_ENDPOINTS: node.api, HYPERCACHE_PASSWORD: "alice-pw" } });
    expect(ok.code).to.equal(0);
    expect(ok.json()).to.include({ id: "alice" });
    const noPassword = await cli(["me", "--user", "alice", "--insecure-basic"], { env: { HYPERCACHE_ENDPOINTS: node.api } });
    expect(noPassword.code).to.equal(2);
    expect(noPassword.stderr).to.contain("HYPERCACHE_PASSWORD");
  });

  it("--user on a terminal without HYPERCACHE_PASSWORD asks for the password, without echo; Ctrl-C there exits 130, Ctrl-D ends the input (tmux)", async () => {
    if (spawnSync("tmux", ["-V"]).status !== 0) throw new Error("tmux is missing: apt-get install -y tmux");
    // One session per run, all killed at the end: killing the last session stops the tmux server,
    // and a session started at that moment can meet the dying server.
    const sessions: string[] = [];
    const pane = (session: string) => execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
    const until = async (session: string, what: string, ok: (t: string) => boolean) => {
      const end = Date.now() + 20_000;
      for (;;) {
        const text = pane(session);
        if (ok(text)) return text;
        if (Date.now() > end) throw new Error(`pane never showed ${what}:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const run = async (password: string, end = "Enter") => {
      const session = `hc-pw-${process.pid}-${sessions.length}`;
      sessions.push(session);
      const cmd = `env -u HYPERCACHE_PASSWORD HYPERCACHE_ENDPOINTS=${node.api} ${process.execPath} ${CLI_BIN} me --user alice --insecure-basic; echo "EXIT=$?"; sleep 60`;
      execFileSync("tmux", ["new-session", "-d", "-s", session, "-x", "120", "-y", "20", cmd]);
      await until(session, "the prompt", (t) => t.includes("password for alice:"));
      if (password !== "") execFileSync("tmux", ["send-keys", "-t", session, "-l", password]);
      execFileSync("tmux", ["send-keys", "-t", session, end]);
      return until(session, "the exit code", (t) => t.includes("EXIT="));
    };
    try {
      const ok = await run("alice-pw");
      expect(ok).to.contain("EXIT=0").and.match(/alice[\s\S]*scopes: read write/);
      expect(ok, "the password is not echoed").not.to.contain("alice-pw");
      const wrong = await run("not-her-pw");
      expect(wrong).to.contain("401 UNAUTHORIZED").and.contain("EXIT=4");
      expect(wrong).not.to.contain("not-her-pw");
      // Before: Ctrl-C exited 1 (as if the server refused), and Ctrl-D became part of the password.
      expect(await run("", "C-c")).to.contain("hypercache: interrupted").and.contain("EXIT=130");
      expect(await run("alice-pw", "C-d"), "Ctrl-D after the password ends it, as Enter does").to.contain("EXIT=0");
      expect(await run("", "C-d"), "Ctrl-D at an empty prompt: no password, nothing sent").to.contain("no password given").and.contain("EXIT=2");
    } finally {
      for (const session of sessions) spawnSync("tmux", ["kill-session", "-t", session]);
    }
  });
});

describe("hypercache CLI over TLS and mutual TLS (real node)", function () {
  this.timeout(30_000);
  let certs: TestCerts;
  let node: NodeProcess;
  let dir: string;

  before(async () => {
    certs = makeTestCerts(["ops-cli"]);
    dir = mkdtempSync(join(tmpdir(), "hypercache-cli-tls-"));
    const policy = join(dir, "policy.yaml");
    writeFileSync(policy, "cert_identities:\n  - {subject_cn: ops-cli, scopes: [read, write]}\n");
    node = await startNode({ id: "tls1", env: { SERVICE_AUTH_CONFIG: policy, SERVICE_API_TLS_CERT: certs.server.cert, SERVICE_API_TLS_KEY: certs.server.key, SERVICE_API_TLS_CLIENT_CA: certs.ca.cert } });
  });
  after(async () => {
    await node?.stop();
    certs?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("--ca verifies the nodes and --cert/--key present the client certificate", async () => {
    const env = { HYPERCACHE_ENDPOINTS: `https://127.0.0.1:${node.apiPort}` };
    const me = await cli(["me", "--ca", certs.ca.cert, "--cert", certs.clients["ops-cli"]?.cert as string, "--key", certs.clients["ops-cli"]?.key as string], { env });
    expect(me.code, me.stderr).to.equal(0);
    expect(me.json()).to.include({ id: "ops-cli" });
    const noCert = await cli(["me", "--ca", certs.ca.cert, "--timeout", "2s"], { env });
    expect(noCert.code, "the handshake fails: no endpoint answered").to.equal(5);
    const halfPair = await cli(["me", "--ca", certs.ca.cert, "--cert", certs.clients["ops-cli"]?.cert as string], { env });
    expect(halfPair.code).to.equal(2);
    expect(halfPair.stderr).to.contain("--cert and --key go together");
  });
});
