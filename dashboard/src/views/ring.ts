// Ring: the share of the hash space each node coordinates (primary) and holds a copy of (owner),
// from GET /cluster/ring; fetched again whenever the membership version changes.
import { html } from "htm/preact";
import type { HypercacheClient } from "../api.js";
import type { Live } from "../app.js";
import { percent } from "../format.js";
import { ErrorNote } from "./common.js";
import { usePoll } from "./use-poll.js";


export function Ring(props: { client: HypercacheClient; live: Live }) {
  const ring = usePoll(props.client, (c, signal) => c.ring({ signal }), 0, [props.live.members?.membership_version]);
  const r = ring.data;
  return html`
    <h2>Ring</h2>
    <${ErrorNote} error=${ring.error} what="the ring" />
    ${r &&
    html`<p class="note">As ${r.node} sees it · membership version ${r.membership_version} · replication ${r.replication} · ${r.virtual_nodes} virtual nodes per node</p>
      <div class="scroll">
        <table id="ring-table">
          <caption class="sr-only">Share of the key space per node</caption>
          <thead><tr><th scope="col">Node</th><th scope="col">Primary share</th><th scope="col">Owner share (primary or replica)</th></tr></thead>
          <tbody>
            ${r.nodes.map(
              (n) => html`<tr key=${n.id} data-node=${n.id}>
                <th scope="row">${n.id}</th>
                <td><span class="bar" aria-hidden="true"><span style=${{ width: percent(n.primary_share) }}></span></span> ${percent(n.primary_share)}</td>
                <td><span class="bar" aria-hidden="true"><span style=${{ width: percent(n.owner_share) }}></span></span> ${percent(n.owner_share)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`}
  `;
}
