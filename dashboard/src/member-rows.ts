// The rows of the Members view: the members of a `members` frame, plus a "dead" row for every
// node this node still counts as known (known_nodes) but has pruned from membership. A pruned
// node leaves the member list at once, so without these rows a killed node would vanish instead
// of showing dead; the row goes back to alive when the node rejoins, and disappears when it is
// removed by hand (DELETE /cluster/members/{id}).
import type { MembersView } from "./schemas.js";

export type MemberRow = MembersView["members"][number] & { readonly pruned: boolean };

export function memberRows(view: MembersView): MemberRow[] {
  const rows: MemberRow[] = view.members.map((m) => ({ ...m, pruned: false }));
  const listed = new Set(view.members.map((m) => m.id));
  for (const id of view.known_nodes ?? []) {
    if (listed.has(id)) continue;
    rows.push({ id, address: "", api_url: "", mgmt_url: "", state: "dead", draining: false, incarnation: 0, last_seen: "", pruned: true });
  }
  return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
