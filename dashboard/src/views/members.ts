// Members: the membership as this node sees it, replaced on every `members` frame of the event
// stream; last-seen times tick every second. Marks the time from a frame's arrival to its rows
// being in the DOM (User Timing measure "hc:members-render").
import { html } from "htm/preact";
import { useEffect, useLayoutEffect, useState } from "preact/hooks";
import type { Live } from "../app.js";
import { ago } from "../format.js";
import { memberRows } from "../member-rows.js";
import { StateBadge } from "./common.js";

export function Members(props: { live: Live }) {
  const view = props.live.members;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  useLayoutEffect(() => {
    if (view === undefined || performance.getEntriesByName("hc:members-frame").length === 0) return;
    performance.clearMeasures("hc:members-render");
    performance.measure("hc:members-render", "hc:members-frame");
  }, [view]);
  if (view === undefined) return html`<h2>Members</h2><p role="status">Waiting for the first members frame…</p>`;
  return html`
    <h2>Members</h2>
    <p class="note">Membership version ${view.membership_version} · replication ${view.replication} · ${view.members.length} members</p>
    <div class="scroll">
      <table id="members-table">
        <caption class="sr-only">Members as seen by ${view.node}</caption>
        <thead><tr><th scope="col">Node</th><th scope="col">State</th><th scope="col">Incarnation</th><th scope="col">Last seen</th><th scope="col">Peer address</th><th scope="col">Management</th></tr></thead>
        <tbody>
          ${memberRows(view).map(
            (m) => html`<tr key=${m.id} data-member=${m.id} data-state=${m.state}>
              <th scope="row">${m.id}${m.id === view.node ? html` <small>(this node)</small>` : null}</th>
              <td><${StateBadge} state=${m.state} draining=${m.draining} /></td>
              <td class="num">${m.pruned ? "–" : m.incarnation}</td>
              <td>${m.pruned ? "pruned from membership" : m.id === view.node ? "–" : html`<time datetime=${m.last_seen}>${ago(Date.parse(m.last_seen), now)}</time>`}</td>
              <td>${m.address ? html`<code>${m.address}</code>` : "–"}</td>
              <td>${m.mgmt_url ? html`<a href=${`${m.mgmt_url.replace(/\/$/, "")}/dashboard/`}>${m.mgmt_url}</a>` : "–"}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  `;
}
