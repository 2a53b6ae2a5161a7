// The real binary refuses, at boot, a policy file that grants nothing ("{}", "tokens: []"): before,
// such a node started and answered 401 to everyone. Exit 2 with the "auth policy file invalid"
// record, no listener bound, like an empty file.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { startNode } from "../helpers/node-process.js";

describe("auth: a policy file that grants nothing stops the real binary at boot", function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-policy-nothing-"));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, text] of [["empty-object.json", "{}"], ["empty-tokens.yaml", "tokens: []\n"]] as const) {
    it(`${name} (${JSON.stringify(text.trim())}): exit 2, "auth policy file invalid", nothing listening`, async () => {
      const path = join(dir, name);
      writeFileSync(path, text);
      const node = await startNode({ id: "policy-nothing", env: { SERVICE_AUTH_CONFIG: path, SERVICE_PEER_TOKEN: "peer-secret" }, readyMessage: false });
      const timeout = setTimeout(() => node.child.kill("SIGKILL"), 20_000);
      const code = await node.exited;
      clearTimeout(timeout);
      const errors = node.logs.filter((r) => r.level === "error");
      expect(code, JSON.stringify(node.logs)).to.equal(2);
      expect(errors.map((r) => r.message)).to.deep.equal(["auth policy file invalid"]);
      expect(String(errors[0]?.error)).to.contain("grants no identity");
      expect(node.logs.some((r) => r.message === "client API listener started")).to.equal(false);
    });
  }
});
