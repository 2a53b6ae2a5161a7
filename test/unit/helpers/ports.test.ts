// The test port picker hands out ports below the kernel's ephemeral range (an outgoing connection
// cannot take them between the check and the node's bind), each free and never twice.
import { expect } from "chai";
import net from "node:net";
import { ephemeralLow, freePorts } from "../../helpers/ports.js";

describe("test helpers: free ports", () => {
  it("hands out distinct ports below the ephemeral range that a listener can bind on 127.0.0.1", async () => {
    const ports = await freePorts(50);
    expect(new Set(ports).size).to.equal(50);
    for (const p of ports) expect(p).to.be.within(10_000, ephemeralLow() - 1);
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(ports[0], "127.0.0.1", resolve);
    });
    srv.close();
  });
});
