// What membership answers to peers: gossip (push-pull) and indirect probes on behalf of a peer.
import type { MemberTable } from "./member-table.js";
import { answeredAsOther, type PeerEndpoint, type PeerMember, type PeerTransport } from "../transport/index.js";

export type MembershipEndpoint = Pick<PeerEndpoint, "gossip" | "probe">;

export function createMembershipEndpoint(deps: { readonly selfId: string; readonly members: MemberTable; readonly transport: PeerTransport }): MembershipEndpoint {
  const { members } = deps;
  return {
    gossip: (from, claims) => {
      // The answer carries this node's view of the caller from before the merge: a caller
      // suspected here learns of the claim and refutes it with a higher incarnation.
      const before = members.get(from);
      members.merge(from, claims);
      const list = members.list() as PeerMember[];
      return before && before.state !== "alive" ? list.map((m) => (m.id === from ? before : m)) : list;
    },
    // The relay side of an indirect probe: this node checks the target's health for the caller.
    probe: async (targetId) => {
      const target = members.get(targetId);
      if (!target || targetId === deps.selfId) return { target: targetId, ok: false, error: "unknown member" };
      try {
        const h = await deps.transport.health({ id: targetId, address: target.address });
        const other = answeredAsOther(h.node, targetId);
        if (other !== undefined) return { target: targetId, ok: false, error: `${target.address} answered as ${other}, not ${targetId}` };
        return { target: targetId, ok: true, error: "" };
      } catch (err) {
        return { target: targetId, ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
  };
}
