export { MemberTable, type MemberTableDeps, type MembershipObserver } from "./member-table.js";
export { decideGossip, isDeadBy, type GossipDecision, type Member, type MemberState } from "./transitions.js";
export { Prober, type ProberDeps } from "./prober.js";
export { Gossiper, type GossiperDeps } from "./gossiper.js";
export { createMembershipEndpoint, type MembershipEndpoint } from "./gossip-endpoint.js";
export { addSeeds } from "./seeds.js";
