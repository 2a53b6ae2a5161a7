// The event stream's state when it is not simply open: connecting, dropped (with the reconnect
// countdown), or refused.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { WatchStatus } from "@hypercache/client/browser";

export function StreamBanner(props: { status: WatchStatus }) {
  const s = props.status;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (s.state !== "down") return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [s]);
  if (s.state === "open") return null;
  if (s.state === "connecting") return html`<div class="banner info" role="status">Connecting to the live event stream…</div>`;
  if (s.state === "refused") return html`<div class="banner error" role="alert">The event stream was refused: ${s.error.message} (${s.error.code})</div>`;
  const inS = Math.max(0, Math.ceil((s.retryAtMs - now) / 1000));
  return html`<div class="banner warn" role="alert">Live updates lost: ${s.reason}. Reconnecting in ${inS} s (attempt ${s.attempt}); the data shown may be stale.</div>`;
}
