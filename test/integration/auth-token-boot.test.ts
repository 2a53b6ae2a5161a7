// The real binary refuses, at boot, a SERVICE_AUTH_TOKEN or SERVICE_PEER_TOKEN that cannot travel
// as "Authorization: Bearer <token>" (before, such a node started and refused every request):
// exit 2, one stderr line naming the variable and not the value, no listener bound.
import { expect } from "chai";
import { startNode } from "../helpers/node-process.js";

async function boot(env: Record<string, string>): Promise<{ code: number | string; stderr: string; listening: boolean }> {
  const node = await startNode({ id: "token-boot", env, readyMessage: false });
  const timeout = setTimeout(() => node.child.kill("SIGKILL"), 20_000);
  const code = await node.exited;
  clearTimeout(timeout);
  const listening = node.logs.some((r) => r.message === "client API listener started" || r.message === "dist HTTP listener started");
  return { code, stderr: node.stderr.join(""), listening };
}

describe("auth: token settings that cannot be sent stop the real binary at boot", function () {
  this.timeout(60_000);
  const cases = [
    ["SERVICE_AUTH_TOKEN", "a b"],
    ["SERVICE_AUTH_TOKEN", "tökén"],
    ["SERVICE_AUTH_TOKEN", " padded "],
    ["SERVICE_PEER_TOKEN", "peer token"],
  ] as const;
  for (const [variable, value] of cases) {
    it(`${variable}=${JSON.stringify(value)}: exit 2 with one line naming ${variable}`, async () => {
      const o = await boot({ [variable]: value });
      expect(o.code, JSON.stringify(o)).to.equal(2);
      expect(o.stderr.trim().split("\n"), o.stderr).to.have.length(1);
      expect(o.stderr).to.contain("invalid configuration").and.contain(variable).and.contain("visible ASCII");
      expect(o.stderr).to.not.contain(value.trim());
      expect(o.listening).to.equal(false);
    });
  }
});
