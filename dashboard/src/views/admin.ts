// Admin (shown to identities with the admin scope; the server checks the scope on every call):
// drain this node, run an eviction or expiration pass, and clear this node's data after the
// node's id is typed as confirmation.
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { problemOf, type HypercacheClient } from "../api.js";
import type { Live } from "../app.js";

export function Admin(props: { client: HypercacheClient; live: Live }) {
  const node = props.live.members?.node ?? "";
  const [result, setResult] = useState<{ ok: boolean; text: string } | undefined>();
  const [armDrain, setArmDrain] = useState(false);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);

  const run = async <T>(label: string, call: (c: HypercacheClient) => Promise<T>, describe: (answer: T) => string) => {
    setBusy(true);
    try {
      const answer = await call(props.client);
      setResult({ ok: true, text: `${label}: ${describe(answer)}` });
    } catch (err) {
      const e = problemOf(err);
      setResult({ ok: false, text: `${label} failed: ${e.message} (${e.code})` });
    } finally {
      setBusy(false);
    }
  };

  return html`
    <h2>Admin</h2>
    <p class="note">These act on this node (${node}) only.</p>
    <div class="cards">
      <section class="card" aria-labelledby="adm-drain">
        <h3 id="adm-drain">Drain</h3>
        <p>Stops taking writes, hands data and hints to the other owners, and makes /health answer 503. Only a restart ends it.</p>
        ${armDrain
          ? html`<button type="button" class="danger" disabled=${busy} onClick=${() => { setArmDrain(false); void run("Drain", (c) => c.drain(), () => "the node is draining"); }}>Confirm: drain ${node}</button>
              <button type="button" onClick=${() => setArmDrain(false)}>Cancel</button>`
          : html`<button type="button" id="drain" disabled=${busy} onClick=${() => setArmDrain(true)}>Drain this node…</button>`}
      </section>
      <section class="card" aria-labelledby="adm-passes">
        <h3 id="adm-passes">Maintenance passes</h3>
        <button type="button" id="evict" disabled=${busy} onClick=${() => void run("Eviction pass", (c) => c.evict(), (a) => `${a.evicted} items evicted`)}>Run eviction pass</button>
        <button type="button" id="expire" disabled=${busy} onClick=${() => void run("Expiration pass", (c) => c.triggerExpiration(), (a) => `${a.expired} items expired`)}>Trigger expiration</button>
      </section>
      <section class="card" aria-labelledby="adm-clear">
        <h3 id="adm-clear">Clear this node</h3>
        <p>Removes every item <strong>this node</strong> holds (its replicas on other nodes stay). Type the node id to confirm.</p>
        <form onSubmit=${(e: Event) => { e.preventDefault(); if (typed === node) void run("Clear this node", (c) => c.clearNode(), (a) => `${a.cleared} items removed from ${node}`).then(() => setTyped("")); }}>
          <label>Node id to confirm <input id="clear-confirm" autocomplete="off" value=${typed} onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} /></label>
          <button type="submit" class="danger" disabled=${busy || typed !== node || node === ""}>Clear this node</button>
        </form>
      </section>
    </div>
    <p id="admin-result" role="status" class=${result ? (result.ok ? "ok" : "error") : ""}>${result?.text ?? ""}</p>
  `;
}
