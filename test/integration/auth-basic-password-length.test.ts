// A real node with a Basic user whose password is 72 bytes, bcrypt's limit: the password works,
// and the same password with any suffix is 401 (bcrypt alone would ignore the suffix).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { expect } from "chai";
import { expectUnauthorized } from "../helpers/auth-expect.js";
import { basic, call } from "../helpers/http-call.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";

const P72 = "A".repeat(72);

describe("auth: Basic passwords longer than 72 bytes (real node)", () => {
  let dir: string;
  let node: NodeProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-pw72-"));
    writeFileSync(
      join(dir, "auth.yaml"),
      [`users:`, `  - {username: bob, password_hash: "${bcrypt.hashSync(P72, 4)}", scopes: [read]}`, "allow_basic_without_tls: true"].join("\n"),
    );
    node = await startNode({ id: "auth-pw72", env: { SERVICE_AUTH_CONFIG: join(dir, "auth.yaml"), SERVICE_AUTH_FAIL_LIMIT: "0" } });
  });
  after(async () => {
    await node?.stop("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("accepts the 72-byte password", async () => {
    expect((await call(`${node.api}/v1/me`, { headers: basic("bob", P72) })).json()).to.include({ id: "bob" });
  });

  it("answers 401 to the 72-byte password followed by any suffix", async () => {
    for (const suffix of ["B", "anything-else-at-all"]) expectUnauthorized(await call(`${node.api}/v1/me`, { headers: basic("bob", P72 + suffix) }), suffix);
  });
});
