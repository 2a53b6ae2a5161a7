// One key: every owner's copy from GET /cluster/keys/{key}/replicas (present, version, origin,
// expiry, size, or unreachable), so that diverging copies stand out; a text or hex preview of the
// value; and the TTL counting down.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { problemOf, type HypercacheClient, type Problem } from "../api.js";
import { asText, bytes, duration, fromBase64, hexDump } from "../format.js";
import type { KeyReplicas, ReplicaCopy, ValuePreview } from "../schemas.js";
import { ErrorNote } from "./common.js";


const COPY_CLASS: Record<ReplicaCopy["state"], string> = { live: "state-alive", tombstone: "state-suspect", absent: "state-suspect", unreachable: "state-unreachable" };

export function KeyDetail(props: { client: HypercacheClient; keyName: string }) {
  const [data, setData] = useState<KeyReplicas | undefined>();
  // undefined: not answered yet; null: the key has no live value (404).
  const [preview, setPreview] = useState<ValuePreview | null | undefined>();
  const [previewError, setPreviewError] = useState<Problem | undefined>();
  const [error, setError] = useState<Problem | undefined>();
  const [hex, setHex] = useState(false);
  const [now, setNow] = useState(Date.now());
  const [reload, setReload] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setData(undefined);
    setPreview(undefined);
    setPreviewError(undefined);
    props.client.replicas(props.keyName, { signal: ctrl.signal }).then(
      (d) => (setData(d), setError(undefined)),
      (err: unknown) => !ctrl.signal.aborted && setError(problemOf(err)),
    );
    // The value may be gone (expired or deleted) while its key is listed: the page says so. Any
    // other failure (403, 429, 503...) is shown with the node's message, not hidden.
    props.client.valuePreview(props.keyName, { signal: ctrl.signal }).then(
      (p) => setPreview(p ?? null),
      (err: unknown) => !ctrl.signal.aborted && setPreviewError(problemOf(err)),
    );
    return () => ctrl.abort();
  }, [props.client, props.keyName, reload]);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);

  const value = preview ? fromBase64(preview.preview_base64) : undefined;
  const text = value ? asText(value, preview?.truncated === true) : undefined;
  const expiry = preview?.expires_at ?? data?.replicas.find((c) => c.present && c.expires_at !== null)?.expires_at ?? undefined;
  return html`
    <section class="detail" aria-labelledby="key-detail-title" id="key-detail">
      <h3 id="key-detail-title"><code>${props.keyName}</code></h3>
      <${ErrorNote} error=${error} what="the key's copies" />
      ${data &&
      html`${data.divergent && html`<p class="banner warn" role="alert" id="divergent">The reachable owners hold different copies; anti-entropy and read repair will converge them.</p>`}
        <p id="ttl">${expiry ? `Expires in ${duration(Date.parse(expiry) - now)} (${expiry})` : "No expiry"}</p>
        <div class="scroll"><table id="replicas-table">
          <caption class="sr-only">Each owner's copy</caption>
          <thead><tr><th scope="col">Owner</th><th scope="col">Copy</th><th scope="col">Version</th><th scope="col">Origin</th><th scope="col">Updated</th><th scope="col">Expires</th><th scope="col">Size</th></tr></thead>
          <tbody>${data.replicas.map((c) => html`<tr key=${c.node} data-owner=${c.node} data-copy=${c.state}>
            <th scope="row">${c.node} <small>(${c.role})</small></th>
            <td><span class=${`badge ${COPY_CLASS[c.state]}`}>${c.state}</span>${c.error !== null ? html` <small>${c.error}</small>` : null}</td>
            <td><code>${c.version ?? "–"}</code></td><td>${c.origin ?? "–"}</td><td>${c.last_updated ?? "–"}</td><td>${c.expires_at ?? "–"}</td><td class="num">${c.bytes !== null ? bytes(c.bytes) : "–"}</td>
          </tr>`)}</tbody>
        </table></div>
        <${ErrorNote} error=${previewError} what="the value preview" />
        ${preview === null && html`<p id="no-value">No live value: the key expired or was deleted since it was listed.</p>`}
        ${value &&
        html`<div class="toolbar"><h4>Value (${bytes(preview!.bytes)}${preview!.truncated ? `, first ${bytes(value.length)} shown` : ""})</h4>
            <button type="button" aria-pressed=${hex || text === undefined} disabled=${text === undefined} onClick=${() => setHex(!hex)}>${hex || text === undefined ? "Show text" : "Show hex"}</button>
          </div>
          <pre id="value-preview" tabindex="0" aria-label="Value preview">${hex || text === undefined ? hexDump(value) : text}</pre>`}
        <button type="button" onClick=${() => setReload(reload + 1)}>Refresh copies</button>`}
    </section>
  `;
}
