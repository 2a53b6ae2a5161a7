// Key browser: the cluster's keys by prefix or glob (GET /cluster/keys, the client key browser's
// semantics), paged with the server's cursor; a banner names nodes whose listing failed. A key's
// detail shows every owner's copy (GET /cluster/keys/{key}/replicas), a text or hex preview of
// the value and the TTL counting down.
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { problemOf, type HypercacheClient, type Problem } from "../api.js";
import { isGlob } from "../format.js";
import type { KeyPage } from "../schemas.js";
import { ErrorNote } from "./common.js";
import { KeyDetail } from "./key-detail.js";


const PAGE_SIZES = [50, 100, 500];

export function Keys(props: { client: HypercacheClient }) {
  const [q, setQ] = useState("");
  const [limit, setLimit] = useState(100);
  /** Cursors of the pages visited: [""] is the first page. */
  const [cursors, setCursors] = useState<string[] | undefined>();
  const [page, setPage] = useState<KeyPage | undefined>();
  const [error, setError] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const [selected, setSelected] = useState<string | undefined>();
  const [query, setQuery] = useState({ q: "", limit: 100 });

  useEffect(() => {
    if (cursors === undefined) return;
    const ctrl = new AbortController();
    const cursor = cursors[cursors.length - 1] ?? "";
    setBusy(true);
    props.client.keyPage({ q: query.q === "" ? undefined : query.q, limit: query.limit, cursor: cursor === "" ? undefined : cursor, signal: ctrl.signal }).then(
      (p) => (setPage(p), setError(undefined), setBusy(false)),
      (err: unknown) => !ctrl.signal.aborted && (setError(problemOf(err)), setPage(undefined), setBusy(false)),
    );
    return () => ctrl.abort();
  }, [props.client, cursors, query]);

  const search = (e: Event) => {
    e.preventDefault();
    setSelected(undefined);
    setQuery({ q, limit });
    setCursors([""]);
  };
  const pageNo = cursors?.length ?? 0;
  const from = (pageNo - 1) * query.limit + 1;
  return html`
    <h2>Keys</h2>
    <form class="toolbar" onSubmit=${search} role="search">
      <label>Filter <input id="key-query" value=${q} placeholder="prefix, or a glob with * ? [" onInput=${(e: Event) => setQ((e.target as HTMLInputElement).value)} aria-describedby="query-kind" /></label>
      <output id="query-kind" class="badge">${q === "" ? "all keys" : isGlob(q) ? "glob" : "prefix"}</output>
      <label>Page size <select id="page-size" value=${limit} onChange=${(e: Event) => setLimit(Number((e.target as HTMLSelectElement).value))}>${PAGE_SIZES.map((n) => html`<option value=${n}>${n}</option>`)}</select></label>
      <button type="submit" disabled=${busy}>Search</button>
    </form>
    <${ErrorNote} error=${error} what="the keys" />
    ${page && page.partial_nodes.length > 0 && html`<div class="banner warn" role="alert" id="partial-nodes">Incomplete listing: ${page.partial_nodes.join(", ")} did not answer, so their keys may be missing.</div>`}
    ${page &&
    html`<p class="note" id="keys-summary" role="status">
        ${page.total_matched === 0 ? "No key matches" : `Keys ${from}–${from + page.keys.length - 1} of ${page.total_matched}`} for ${query.q === "" ? "all keys" : `${isGlob(query.q) ? "glob" : "prefix"} “${query.q}”`}${page.truncated ? " (result set truncated at its cap)" : ""}
      </p>
      <div class="keys-layout">
        <ul class="key-list" id="key-list" aria-label="Keys">
          ${page.keys.map((k) => html`<li key=${k}><button type="button" class="link" aria-pressed=${selected === k} onClick=${() => setSelected(k)}>${k}</button></li>`)}
        </ul>
        ${selected !== undefined && html`<${KeyDetail} client=${props.client} keyName=${selected} />`}
      </div>
      <div class="toolbar pager">
        <button type="button" id="prev-page" disabled=${busy || pageNo <= 1} onClick=${() => setCursors(cursors!.slice(0, -1))}>Previous page</button>
        <span>Page ${pageNo}</span>
        <button type="button" id="next-page" disabled=${busy || page.next_cursor === ""} onClick=${() => setCursors([...cursors!, page.next_cursor])}>Next page</button>
      </div>`}
  `;
}
