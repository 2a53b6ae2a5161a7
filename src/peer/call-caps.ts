// What one peer call may carry, checked before anything of it is applied. The node's own senders
// stay far below these (512 records a call: PEER_BATCHING; at most GOSSIP_ENTRIES_MAX members;
// MERKLE_LEAVES_MAX leaves), but the receiver took whatever fit in the 16 MiB body: a Set of
// 300,000 entries was applied and answered in one piece, 1.3–2.1 s of a stalled event loop; a
// Forward of 200,000 writes, 2.1–4.2 s (a review's stall hunt). Past a cap the call is refused,
// 400 BAD_REQUEST (INVALID_ARGUMENT). Left: decoding the message before it can be counted, bounded
// by the body cap (150–770 ms for the largest), which only a caller holding the peer token (or a
// loopback caller in protected mode) can make the node do.
import { badRequest } from "../core/errors.js";
import { MEMBERS_MAX, SCAN_LIMITS } from "../core/limits.js";

/**
 * Records, writes or keys one call carries at most: the largest batch a node sends in one call
 * (a migration batch, SERVICE_REBALANCE_BATCH_SIZE, may be set up to 10,000; every other sender
 * puts at most 512 in a call). Applying 10,000 costs about 50–70 ms.
 */
export const PEER_CALL_ITEMS_MAX = 10_000;

/** Members one gossip carries at most: a cluster's whole table. */
export const PEER_GOSSIP_MEMBERS_MAX = MEMBERS_MAX;

/** Leaves one Merkle range asks for at most: a whole tree. */
export const PEER_MERKLE_LEAVES_MAX = SCAN_LIMITS.merkleLeavesMax;

/** Throws 400 when a call's `what` counts more than `max` items. */
export function capItems(call: string, what: string, n: number, max = PEER_CALL_ITEMS_MAX): void {
  if (n > max) throw badRequest(`${call} carries ${n} ${what}, more than the ${max} one call may carry`, { max_items: max });
}
