// The answering side of Merkle anti-entropy: a peer asks for the root, the leaves, and the
// records of differing leaves of the keys both nodes own (in this node's ring view).
import { badRequest } from "../../core/errors.js";
import type { MerkleRangePage, MerkleRoot } from "../../transport/index.js";
import { validLeafCount } from "./merkle.js";
import type { MerkleScan } from "./merkle-scan.js";
import type { SyncReceipts } from "./sync-receipts.js";

export class MerkleAnswers {
  constructor(
    private readonly scan: MerkleScan,
    private readonly receipts: SyncReceipts,
  ) {}

  /**
   * Root over the keys this node and `requester` both own, whether its ring holds `requester`,
   * and when the answer began (what the requester reports back once its sync completes; the
   * report it brings now is noted: sync-receipts.ts).
   */
  async root(requester: string, leafCount: number, pulledThroughMs: number | undefined): Promise<MerkleRoot> {
    const n = checkLeafCount(leafCount);
    this.receipts.noteReported(requester, pulledThroughMs);
    const asOfMs = this.receipts.handOut(requester);
    const b = await this.scan.summarize(requester, n);
    return { root: b.root(), leafCount: b.leafCount, recordCount: b.records, requesterOnRing: this.scan.onRing(requester), asOfMs };
  }

  async leaves(requester: string, leafCount: number): Promise<string[]> {
    return (await this.scan.summarize(requester, checkLeafCount(leafCount))).leaves();
  }

  range(requester: string, leafCount: number, leaves: readonly number[], cursor: string): Promise<MerkleRangePage> {
    return this.scan.range(requester, checkLeafCount(leafCount), leaves, cursor);
  }
}

function checkLeafCount(n: number): number {
  if (!validLeafCount(n)) throw badRequest(`leaf_count must be a power of two between 1 and 65536; got ${n}`);
  return n;
}
