// The /cluster/members body, also the data of the SSE "members" frame.
import type { components } from "../../gen/openapi/management.js";
import { VIRTUAL_NODES } from "../core/limits.js";
import type { Config } from "../config/index.js";
import type { MemberTable } from "../membership/index.js";

export function membersBody(config: Config, members: MemberTable): components["schemas"]["Members"] {
  return {
    node: config.nodeId,
    replication: config.replication,
    virtual_nodes: VIRTUAL_NODES,
    membership_version: members.version,
    known_nodes: members.knownIds(),
    members: members.list().map((m) => ({
      id: m.id,
      address: m.address,
      state: m.state,
      incarnation: m.incarnation,
      last_seen: new Date(m.lastSeenMs).toISOString(),
      api_url: m.apiUrl ?? "",
      mgmt_url: m.mgmtUrl ?? "",
      draining: m.draining === true,
    })),
  };
}
