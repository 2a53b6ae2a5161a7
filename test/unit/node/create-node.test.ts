// createNode wiring that has no better home: seeds from the configuration, and the warning for a
// bare-address seed (its id is learned from the peer, which production should not rely on).
import { expect } from "chai";
import { seededRandom } from "../../../src/core/random.js";
import { LOG, recordingLogger } from "../../../src/log/index.js";
import { createNode } from "../../../src/node.js";
import { ManualClock } from "../../helpers/manual-clock.js";
import { testConfig } from "../../helpers/test-config.js";

const build = (seeds: string) => {
  const clock = new ManualClock();
  const logger = recordingLogger("debug");
  const node = createNode(testConfig({ SERVICE_NODE_ID: "n1", SERVICE_DIST_ADDR: "127.0.0.1:7946", SERVICE_SEEDS: seeds }), {
    logger, clock, timers: clock, random: seededRandom(1), documents: { client: "", management: "" }, serviceVersion: "test",
  });
  return { node, logger };
};

describe("createNode", () => {
  it("adds every id@host:port seed as an alive member, and logs `cluster join: node starting` with them", async () => {
    const { node, logger } = build("n2@127.0.0.1:7947,n3@127.0.0.1:7948");
    expect(node.members.list().map((m) => `${m.id}@${m.address}:${m.state}`)).to.deep.equal(["n1@127.0.0.1:7946:alive", "n2@127.0.0.1:7947:alive", "n3@127.0.0.1:7948:alive"]);
    const join = logger.records.find((r) => r.message === LOG.clusterJoin);
    expect(join?.fields.seeds).to.deep.equal(["n2@127.0.0.1:7947", "n3@127.0.0.1:7948"]);
    await node.stop();
  });

  it("warns about a bare-address seed and leaves it out of the members until its id is learned", async () => {
    const { node, logger } = build("127.0.0.1:7949");
    const warn = logger.records.find((r) => r.message === LOG.bareSeed);
    expect(warn).to.deep.include({ level: "warn" });
    expect(warn?.fields.seed).to.equal("127.0.0.1:7949");
    expect(node.members.list().map((m) => m.id)).to.deep.equal(["n1"]);
    await node.stop();
  });
});
