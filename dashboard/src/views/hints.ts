// Hints: the replay queue of this node per target node (GET /dist/hints), refreshed every 2 s.
import { html } from "htm/preact";
import type { Api } from "../api.js";
import { bytes, duration } from "../format.js";
import { ErrorNote } from "./common.js";
import { usePoll } from "./use-poll.js";

interface HintTarget { node: string; count: number; bytes: number; oldest_age_ms: number }
interface HintsView {
  node: string;
  targets: HintTarget[];
  total: { count: number; bytes: number };
  caps: { count_per_node: number; bytes: number; ttl_ms: number };
}

export function Hints(props: { api: Api }) {
  const hints = usePoll<HintsView>(props.api, "/dist/hints", 2000);
  const h = hints.data;
  return html`
    <h2>Hints</h2>
    <${ErrorNote} error=${hints.error} what="the hints" />
    ${h &&
    html`<p class="note" id="hints-total">${h.total.count} hints queued on ${h.node} (${bytes(h.total.bytes)}) · caps: ${h.caps.count_per_node} per target, ${bytes(h.caps.bytes)} in all, kept ${duration(h.caps.ttl_ms)}</p>
      ${h.targets.length === 0
        ? html`<p class="ok">No hints queued: every replica write reached its owner.</p>`
        : html`<div class="scroll"><table id="hints-table">
            <caption class="sr-only">Queued hints per target node</caption>
            <thead><tr><th scope="col">Target</th><th scope="col">Hints</th><th scope="col">Bytes</th><th scope="col">Oldest</th></tr></thead>
            <tbody>${h.targets.map((t) => html`<tr key=${t.node}><th scope="row">${t.node}</th><td class="num">${t.count}</td><td class="num">${bytes(t.bytes)}</td><td>${duration(t.oldest_age_ms)}</td></tr>`)}</tbody>
          </table></div>`}`}
  `;
}
