// Seeding the member table from SERVICE_SEEDS at start-up.
import { LOG, type Logger } from "../log/index.js";
import type { MemberTable } from "./member-table.js";

/**
 * Adds every `id@host:port` seed as an alive member and logs the join. A bare-address seed is
 * left out with a warning: its id is learned from the peer when the gossiper reaches it.
 */
export function addSeeds(members: MemberTable, seeds: ReadonlyArray<{ readonly id: string; readonly address: string }>, replication: number, logger: Logger): void {
  logger.info(LOG.clusterJoin, { seeds: seeds.map((s) => `${s.id}@${s.address}`), replication });
  for (const seed of seeds) {
    if (seed.id === "") logger.warn(LOG.bareSeed, { seed: seed.address });
    else members.addPeer(seed.id, seed.address);
  }
}
