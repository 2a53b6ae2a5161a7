// A process-level check of the listeners' connection cap (listener-connection-cap.test.ts proves
// the rule on a small cap): MGMT_CONNECTIONS_MAX connections that never send a byte used to take
// every slot of the management listener, and Node closed each new connection at once, so the
// Kubernetes probes failed for the 60 s header timeout. Now the probe's connection takes the slot
// of the oldest silent one.
import { expect } from "chai";
import { MGMT_CONNECTIONS_MAX } from "../../src/core/limits.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RawConnection } from "../helpers/raw-http.js";

describe("management listener: a flood of silent connections does not lock the probes out", function () {
  this.timeout(60_000);
  let node: NodeProcess;
  const silent: RawConnection[] = [];

  before(async () => {
    node = await startNode();
  });
  after(async () => {
    for (const c of silent) c.destroy();
    await node.stop();
  });

  it("answers /livez and /readyz with every slot taken by silent connections", async () => {
    for (let i = 0; i < MGMT_CONNECTIONS_MAX; i++) silent.push(await RawConnection.open(node.mgmtPort));
    // The probes stay open (keep-alive) until both have been answered: a probe closed before the
    // next one connects gives its slot back, and the next one then takes it without closing a
    // silent connection (the test raced on that, 1 run in 5 on a busy machine).
    const probes: RawConnection[] = [];
    for (const path of ["/livez", "/readyz"]) {
      const probe = await RawConnection.open(node.mgmtPort);
      probes.push(probe);
      await probe.write(`GET ${path} HTTP/1.1\r\nHost: probe\r\n\r\n`);
      expect((await probe.read({ timeoutMs: 5_000 })).status, path).to.equal(200);
    }
    for (const probe of probes) probe.destroy();
    // The slots went from the oldest connections; the newest are still open.
    await silent[0]!.waitClosed(5_000);
    await silent[1]!.waitClosed(5_000);
    expect(silent[MGMT_CONNECTIONS_MAX - 1]!.endedByPeer).to.equal(false);
    // Operators see it: the metric counts every silent connection the node closed for room.
    const metrics = await RawConnection.open(node.mgmtPort);
    await metrics.write("GET /dist/metrics HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    const counts = (await metrics.read({ timeoutMs: 5_000 })).json<Record<string, number>>();
    metrics.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(counts["dist.connections.management.evicted"]).to.be.at.least(2);
    expect(counts["dist.connections.management.evicted"]).to.equal(silent.filter((c) => c.endedByPeer).length);
    expect(counts["dist.connections.management.refused"]).to.equal(0);
  });
});
