// Binary values written by the SDK and read by the CLI binary, and the other way round, come back
// byte for byte: every byte value, invalid UTF-8, a NUL-heavy value, a large random one, empty.
// A key argument that is not UTF-8 is refused rather than stored under another key.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { HypercacheClient } from "@hypercache/client/node";
import { startNode, type NodeProcess } from "../../../test/helpers/node-process.js";
import { CLI_BIN, cliProcess } from "./cli-harness.js";

const VALUES: Record<string, Buffer> = {
  "every-byte": Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
  "invalid-utf8": Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc, 0xff, 0xfe]),
  nuls: Buffer.alloc(1000),
  "crlf-text": Buffer.from("line 1\r\nline 2\r\n\r\n"),
  random: randomBytes(256 * 1024),
  empty: Buffer.alloc(0),
};

describe("SDK and CLI binary round trips", function () {
  this.timeout(60_000);
  let node: NodeProcess;
  let dir: string;
  let client: HypercacheClient;
  let env: Record<string, string>;

  before(async () => {
    node = await startNode({ id: "rt1" });
    dir = mkdtempSync(join(tmpdir(), "hypercache-rt-"));
    client = new HypercacheClient({ endpoints: [node.api], discovery: false });
    env = { HYPERCACHE_ENDPOINTS: node.api };
  });
  after(async () => {
    await client?.close();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a key argument that is not UTF-8 is refused (exit 2), not silently turned into U+FFFD (two different byte keys collided)", async () => {
    // bash's $'...' puts the raw bytes into argv; Node decodes argv as UTF-8 with U+FFFD for them.
    const sh = (args: string) => spawnSync("bash", ["-c", `"${process.execPath}" "${CLI_BIN}" ${args}`], { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const set = sh("set $'bin:\\xff' one");
    // Before: exit 0, stored under "bin:\ufffd", which `get $'bin:\xfe'` then read.
    expect(set.status, set.stderr).to.equal(2);
    expect(set.stderr).to.match(/^hypercache: .*U\+FFFD.*`load`/);
    const get = sh("get $'bin:\\xfe' --out -");
    expect(get.status, get.stderr).to.equal(2);
    expect(get.stdout).to.equal("");
    for (const cmd of ["del $'bin:\\xff'", "incr $'bin:\\xff'", "touch $'bin:\\xff' --persist", "owners $'bin:\\xff'"]) expect(sh(cmd).status, cmd).to.equal(2);
    expect(await client.get("bin:\ufffd"), "nothing stored under U+FFFD").to.equal(undefined);
    // A key that holds U+FFFD itself cannot be told apart on the command line: `load` takes it.
    expect(sh("set $'bin:\\xef\\xbf\\xbd' one").status).to.equal(2);
  });

  for (const [name, bytes] of Object.entries(VALUES)) {
    it(`${name} (${bytes.length} bytes): SDK set, CLI get --out; CLI set --file (and through pipes), SDK get`, async () => {
      await client.set(`sdk:${name}`, bytes);
      const out = join(dir, `${name}.out`);
      const get = await cliProcess(["get", `sdk:${name}`, "--out", out], { env });
      expect(get.code, get.stderr).to.equal(0);
      expect(readFileSync(out).equals(bytes), "CLI read what the SDK wrote").to.equal(true);
      const viaPipes = name === "every-byte" || name === "random";
      if (viaPipes) expect((await cliProcess(["get", `sdk:${name}`, "--out", "-"], { env })).stdout.equals(bytes), "CLI wrote the bytes to a pipe").to.equal(true);

      const src = join(dir, `${name}.in`);
      writeFileSync(src, bytes);
      expect((await cliProcess(["set", `cli:${name}`, "--file", src], { env })).code).to.equal(0);
      expect(Buffer.from((await client.get(`cli:${name}`)) ?? []).equals(bytes), "SDK read what the CLI wrote from a file").to.equal(true);
      if (viaPipes) {
        expect((await cliProcess(["set", `stdin:${name}`], { env, stdin: bytes })).code).to.equal(0);
        expect(Buffer.from((await client.get(`stdin:${name}`)) ?? []).equals(bytes), "SDK read what the CLI wrote from stdin").to.equal(true);
      }
    });
  }
});
