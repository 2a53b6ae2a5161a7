// Overview: this node's state and uptime, members by state, and the alerts an operator acts on
// (suspect or dead members, pending hints, quorum failures in the last 5 minutes).
import { html } from "htm/preact";
import type { HypercacheClient } from "../api.js";
import type { Live } from "../app.js";
import { bytes, dataLine, duration } from "../format.js";
import { memberRows } from "../member-rows.js";
import { RATE_SERIES } from "../series.js";
import { ErrorNote } from "./common.js";
import { usePoll } from "./use-poll.js";


const QUORUM = RATE_SERIES.findIndex((s) => s.label.startsWith("quorum"));

export function Overview(props: { client: HypercacheClient; live: Live }) {
  const { live } = props;
  const stats = usePoll(props.client, (c, signal) => c.stats({ signal }), 5000);
  const drain = usePoll(props.client, (c, signal) => c.drainStatus({ signal }), 5000);
  const members = live.members ? memberRows(live.members) : [];
  const count = (st: string) => members.filter((m) => m.state === st).length;
  const quorumFailures = Math.round(live.history.windowTotal(QUORUM));
  const alerts: string[] = [];
  for (const m of members) if (m.state !== "alive") alerts.push(`${m.id} is ${m.state}`);
  if (drain.data && drain.data.hints_pending > 0) alerts.push(`${drain.data.hints_pending} hints pending replay on this node`);
  if (quorumFailures > 0) alerts.push(`${quorumFailures} quorum failures in the last 5 minutes`);
  return html`
    <h2>Overview</h2>
    <div class="cards">
      <section class="card" aria-labelledby="ov-node">
        <h3 id="ov-node">This node</h3>
        <dl>
          <dt>Node</dt><dd>${live.members?.node ?? "…"}</dd>
          <dt>State</dt><dd id="node-state">${drain.data ? drain.data.state : "…"}</dd>
          <dt>Uptime</dt><dd>${stats.data ? duration(stats.data.uptime_s * 1000) : "…"}</dd>
          <dt>Items</dt><dd>${stats.data ? `${stats.data.items} of ${stats.data.capacity} (${bytes(stats.data.bytes)})` : "…"}</dd>
          <dt>Keys and values</dt><dd id="node-data">${stats.data ? dataLine(stats.data.data_bytes, stats.data.max_data_bytes) : "…"}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="ov-members">
        <h3 id="ov-members">Members</h3>
        <dl>
          <dt>Alive</dt><dd class="state-alive-text">${count("alive")}</dd>
          <dt>Suspect</dt><dd class="state-suspect-text">${count("suspect")}</dd>
          <dt>Dead</dt><dd class="state-dead-text">${count("dead")}</dd>
          <dt>Replication</dt><dd>${live.members?.replication ?? "…"}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="ov-alerts">
        <h3 id="ov-alerts">Alerts</h3>
        ${alerts.length === 0 ? html`<p class="ok">No alerts.</p>` : html`<ul class="alerts">${alerts.map((a) => html`<li>${a}</li>`)}</ul>`}
      </section>
    </div>
    <${ErrorNote} error=${stats.error} what="the statistics" />
    <${ErrorNote} error=${drain.error} what="the drain status" />
  `;
}
