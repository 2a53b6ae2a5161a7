export { HashRing, HASH_SPACE, sameOwnerList, type Owners } from "./hash-ring.js";
export { ringShares, type NodeShare } from "./ring-shares.js";
