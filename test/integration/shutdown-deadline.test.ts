// SIGTERM to exit is bounded whatever the metric exporter does: a node whose OTLP endpoint takes
// connections and never answers (OTEL_EXPORTER_OTLP_TIMEOUT 60 s) waited for the exporter's
// timeout in its stop, past the Helm chart's terminationGracePeriodSeconds budget (the kubelet
// then kills it without its last log record). The stop now gets SHUTDOWN_LIMITS.stopMaxMs.
import { expect } from "chai";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { SHUTDOWN_LIMITS } from "../../src/core/limits.js";
import { LOG } from "../../src/log/index.js";
import { startNode } from "../helpers/node-process.js";

describe("integration/shutdown deadline", function () {
  this.timeout(45_000);

  it("an OTLP endpoint that never answers holds the stop SHUTDOWN_LIMITS.stopMaxMs at most: the node logs it and exits 0", async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => {
      sockets.push(s);
      s.on("data", () => undefined);
      s.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const n = await startNode({
        id: "stop-deadline",
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, OTEL_METRIC_EXPORT_INTERVAL: "60000", OTEL_EXPORTER_OTLP_TIMEOUT: "60000" },
      });
      const started = performance.now();
      const code = await n.stop("SIGTERM");
      const tookMs = performance.now() - started;
      expect(code).to.equal(0);
      expect(tookMs, "SIGTERM to exit").to.be.below(SHUTDOWN_LIMITS.stopMaxMs + 5_000);
      expect(n.logs.some((r) => r.message === LOG.stopTimedOut), "the cut stop is logged").to.equal(true);
      expect(n.logs.some((r) => r.message === LOG.stoppedCleanly)).to.equal(true);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
