// One key: every owner's copy from GET /cluster/keys/{key}/replicas (present, version, origin,
// expiry, size, or unreachable), so that diverging copies stand out; a text or hex preview of the
// value; and the TTL counting down.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { Api, ApiError } from "../api.js";
import { asText, bytes, duration, fromBase64, hexDump } from "../format.js";
import { ErrorNote } from "./common.js";

interface Copy {
  node: string;
  state: "present" | "absent" | "unreachable";
  version?: string;
  origin?: string;
  expires_at?: string;
  bytes?: number;
  error?: string;
}
interface Replicas { key: string; owners: Copy[]; value_base64?: string; value_truncated?: boolean }

/** Preview length (bytes) shown of a value. */
const PREVIEW_BYTES_MAX = 4096;

export function KeyDetail(props: { api: Api; keyName: string }) {
  const [data, setData] = useState<Replicas | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [hex, setHex] = useState(false);
  const [now, setNow] = useState(Date.now());
  const [reload, setReload] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setData(undefined);
    props.api.get<Replicas>(`/cluster/keys/${encodeURIComponent(props.keyName)}/replicas`, ctrl.signal).then(
      (d) => (setData(d), setError(undefined)),
      (err: unknown) => !ctrl.signal.aborted && setError(err as ApiError),
    );
    return () => ctrl.abort();
  }, [props.api, props.keyName, reload]);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);

  const value = data?.value_base64 !== undefined ? fromBase64(data.value_base64) : undefined;
  const text = value ? asText(value) : undefined;
  const expiry = data?.owners.find((c) => c.state === "present" && c.expires_at)?.expires_at;
  return html`
    <section class="detail" aria-labelledby="key-detail-title" id="key-detail">
      <h3 id="key-detail-title"><code>${props.keyName}</code></h3>
      <${ErrorNote} error=${error} what="the key's copies" />
      ${data &&
      html`<p id="ttl">${expiry ? `Expires in ${duration(Date.parse(expiry) - now)} (${expiry})` : "No expiry"}</p>
        <div class="scroll"><table id="replicas-table">
          <caption class="sr-only">Each owner's copy</caption>
          <thead><tr><th scope="col">Owner</th><th scope="col">Copy</th><th scope="col">Version</th><th scope="col">Origin</th><th scope="col">Expires</th><th scope="col">Size</th></tr></thead>
          <tbody>${data.owners.map((c) => html`<tr key=${c.node} data-owner=${c.node} data-copy=${c.state}>
            <th scope="row">${c.node}</th>
            <td><span class=${`badge state-${c.state === "present" ? "alive" : c.state === "absent" ? "suspect" : "unreachable"}`}>${c.state}</span>${c.error ? html` <small>${c.error}</small>` : null}</td>
            <td><code>${c.version ?? "–"}</code></td><td>${c.origin ?? "–"}</td><td>${c.expires_at ?? "–"}</td><td class="num">${c.bytes !== undefined ? bytes(c.bytes) : "–"}</td>
          </tr>`)}</tbody>
        </table></div>
        ${value &&
        html`<div class="toolbar"><h4>Value (${bytes(value.length)}${data.value_truncated ? ", preview" : ""})</h4>
            <button type="button" aria-pressed=${hex || text === undefined} disabled=${text === undefined} onClick=${() => setHex(!hex)}>${hex || text === undefined ? "Show text" : "Show hex"}</button>
          </div>
          <pre id="value-preview" tabindex="0" aria-label="Value preview">${hex || text === undefined ? hexDump(value.subarray(0, PREVIEW_BYTES_MAX)) : text.slice(0, PREVIEW_BYTES_MAX)}</pre>`}
        <button type="button" onClick=${() => setReload(reload + 1)}>Refresh copies</button>`}
    </section>
  `;
}
