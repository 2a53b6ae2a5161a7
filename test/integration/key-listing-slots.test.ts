// The key browser's listing slots on a real process: a node coordinates at most
// KEY_LISTINGS_AT_ONCE_MAX listings, and a listing whose client hangs up stops and frees its slot.
// A glob like "*xxx…xy" over long keys costs the matcher O(pattern × key): with 60 keys of 4,000
// characters each such listing takes over a second of CPU. Before, four clients that sent one
// each and hung up kept every slot (and the CPU) busy for their whole run.
import { expect } from "chai";
import { KEY_LISTINGS_AT_ONCE_MAX } from "../../src/core/limits.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { RawConnection } from "../helpers/raw-http.js";
import { loadKeys } from "../hostile/load-keys.js";

const KEYS = 60;
const longKey = (i: number): string => `k${"x".repeat(4000)}${String(i).padStart(4, "0")}`;
const SLOW_Q = encodeURIComponent(`*${"x".repeat(3000)}y`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("key browser: listing slots are capped, and a listing whose client hangs up frees its slot", function () {
  this.timeout(120_000);
  let node: NodeProcess;

  before(async () => {
    node = await startNode({ id: "listing-slots" });
    await loadKeys(node.api, KEYS, {}, 2, { keyOf: longKey, batchItems: 30, value: "v" });
  });
  after(async () => {
    await node?.stop();
  });

  const browse = async (q: string) => {
    const c = await RawConnection.open(node.apiPort);
    await c.write(`GET /v1/cache/keys?q=${q} HTTP/1.1\r\nHost: slots\r\nConnection: close\r\n\r\n`);
    const answer = await c.read({ timeoutMs: 30_000 });
    c.destroy();
    return answer;
  };

  it("refuses a listing past the cap with 503 and Retry-After, and takes one again once the slow ones' clients hung up", async () => {
    const slow: RawConnection[] = [];
    for (let i = 0; i < KEY_LISTINGS_AT_ONCE_MAX; i++) {
      const c = await RawConnection.open(node.apiPort);
      await c.write(`GET /v1/cache/keys?q=${SLOW_Q} HTTP/1.1\r\nHost: slots\r\n\r\n`);
      slow.push(c);
    }
    await sleep(300);
    const refused = await browse("zzz");
    expect(refused.status, refused.body.toString()).to.equal(503);
    expect(refused.headers["retry-after"]).to.equal("1");
    expect(refused.json()).to.deep.include({ code: "UNAVAILABLE", details: { listings_max: KEY_LISTINGS_AT_ONCE_MAX } });
    for (const c of slow) c.destroy();
    await sleep(500);
    const taken = await browse("zzz");
    expect(taken.status, taken.body.toString()).to.equal(200);
    expect(taken.json()).to.deep.include({ keys: [], total_matched: 0 });
  });
});
