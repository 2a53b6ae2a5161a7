import type { EvictionAlgorithm } from "../../config/index.js";
import { CawolfuPolicy } from "./cawolfu-policy.js";
import { LfuPolicy } from "./lfu-policy.js";
import { LruPolicy } from "./lru-policy.js";
import type { EvictionPolicy } from "./policy.js";

export type { EvictionPolicy } from "./policy.js";
export { LruPolicy } from "./lru-policy.js";
export { LfuPolicy } from "./lfu-policy.js";
export { CawolfuPolicy } from "./cawolfu-policy.js";

/** Builds the policy of one shard whose share of the capacity is `capacityShare` items. */
export function createPolicy(algorithm: EvictionAlgorithm, capacityShare: number): EvictionPolicy {
  switch (algorithm) {
    case "lru":
      return new LruPolicy();
    case "lfu":
      return new LfuPolicy();
    case "cawolfu":
      return new CawolfuPolicy(capacityShare);
  }
}
