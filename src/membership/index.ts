export { MemberTable, type MemberTableDeps, type MembershipObserver } from "./member-table.js";
export { decideGossip, isDeadBy, type GossipDecision, type Member, type MemberState } from "./transitions.js";
export { Prober, withTimeout, type ProberDeps } from "./prober.js";
export { Gossiper, type GossiperDeps } from "./gossiper.js";
