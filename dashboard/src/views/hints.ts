// Hints: this node's replay queue per target node (GET /dist/hints), refreshed every 2 s, with
// the caps and counters, and the queue of failed migrations below it.
import { html } from "htm/preact";
import type { HypercacheClient } from "../api.js";
import { bytes, duration } from "../format.js";
import type { HintQueueView } from "../schemas.js";
import { ErrorNote } from "./common.js";
import { usePoll } from "./use-poll.js";

function QueueTable(props: { id: string; caption: string; queue: HintQueueView; empty: string }) {
  const q = props.queue;
  if (q.targets.length === 0) return html`<p class="ok">${props.empty}</p>`;
  return html`<div class="scroll"><table id=${props.id}>
    <caption class="sr-only">${props.caption}</caption>
    <thead><tr><th scope="col">Target</th><th scope="col">Queued</th><th scope="col">Bytes</th><th scope="col">Oldest</th><th scope="col">Replay</th></tr></thead>
    <tbody>${q.targets.map(
      (t) => html`<tr key=${t.node} data-target=${t.node}><th scope="row">${t.node}</th><td class="num">${t.count}</td><td class="num">${bytes(t.bytes)}</td><td>${duration(t.oldest_age_ms)}</td>
        <td>${t.replay_failing ? html`<span class="badge state-dead">failing</span>` : html`<span class="badge state-alive">ok</span>`}</td></tr>`,
    )}</tbody>
  </table></div>`;
}

export function Hints(props: { client: HypercacheClient }) {
  const hints = usePoll(props.client, (c, signal) => c.hints({ signal }), 2000);
  const h = hints.data;
  return html`
    <h2>Hints</h2>
    <${ErrorNote} error=${hints.error} what="the hints" />
    ${h &&
    html`<p class="note" id="hints-total">${h.total_count} hints queued on ${h.node} (${bytes(h.total_bytes)}), oldest ${duration(h.oldest_age_ms)} · caps: ${h.caps.max_per_node} per target, ${bytes(h.caps.max_bytes)} in all, kept ${duration(h.caps.ttl_ms)}</p>
      <${QueueTable} id="hints-table" caption="Queued hints per target node" queue=${h} empty="No hints queued: every replica write reached its owner." />
      <h3>Since start</h3>
      <dl class="counters">
        <dt>Queued</dt><dd>${h.counters.queued}</dd><dt>Replayed</dt><dd>${h.counters.replayed}</dd><dt>Expired</dt><dd>${h.counters.expired}</dd>
        <dt>Dropped (per-target cap)</dt><dd>${h.counters.dropped_per_node_cap}</dd><dt>Dropped (byte cap)</dt><dd>${h.counters.dropped_bytes_cap}</dd>
      </dl>
      <h3>Migrations waiting for their owner</h3>
      <${QueueTable} id="migrations-table" caption="Queued migrations per target node" queue=${h.migrations} empty="No migrations queued." />`}
  `;
}
