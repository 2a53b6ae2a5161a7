export { MemberTable, type MemberTableDeps, type MembershipObserver } from "./member-table.js";
export { decideGossip, isDeadBy, type GossipDecision, type Member, type MemberState } from "./transitions.js";
