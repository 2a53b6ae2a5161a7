// Who answered a health check: a peer's address can answer as another node (a seed given with
// the wrong id, an address reused by a restarted pod). Such an answer says nothing about the
// member probed, on the direct probe and on a relay's indirect probe alike: a relay that took
// any answer as good kept a seed's wrong id alive for ever, with a share of the ring.
import type { HealthInfo } from "../transport/index.js";

/** The id of the node that answered for `memberId`, when it is another node ("" = not said). */
export function answeredAsOther(h: HealthInfo, memberId: string): string | undefined {
  return h.node !== "" && h.node !== memberId ? h.node : undefined;
}
