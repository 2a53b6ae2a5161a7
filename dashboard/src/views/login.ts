// Sign-in: Bearer token, HTTP Basic, or none (anonymous, or a client certificate the browser
// presents). The credential is checked with /v1/me before any view shows.
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { Credential } from "../credential.js";

export function Login(props: { onLogin: (c: Credential) => void; error: string | undefined; busy: boolean }) {
  const [kind, setKind] = useState<Credential["kind"]>("bearer");
  const [token, setToken] = useState("");
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  // A page served without TLS sends a Basic password readable on the wire: only when the user
  // ticks the box (the node must also allow Basic without TLS, allow_basic_without_tls).
  const plain = location.protocol !== "https:";
  const [plainOk, setPlainOk] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    if (kind === "bearer") props.onLogin({ kind, token: token.trim() });
    else if (kind === "basic") props.onLogin(plain ? { kind, user, password, plainHttp: true } : { kind, user, password });
    else props.onLogin({ kind: "none" });
  };
  return html`
    <main id="main" class="login">
      <h1>hypercache dashboard</h1>
      <form onSubmit=${submit} aria-describedby="login-note">
        <fieldset>
          <legend>Credential</legend>
          ${(["bearer", "basic", "none"] as const).map(
            (k) => html`<label class="radio"><input type="radio" name="kind" value=${k} checked=${kind === k} onChange=${() => setKind(k)} /> ${{ bearer: "Bearer token", basic: "User and password (Basic)", none: "None (anonymous or client certificate)" }[k]}</label>`,
          )}
        </fieldset>
        ${kind === "bearer" && html`<label>Token <input id="token" type="password" autocomplete="off" required value=${token} onInput=${(e: Event) => setToken((e.target as HTMLInputElement).value)} /></label>`}
        ${kind === "basic" &&
        html`<label>User <input id="user" autocomplete="username" required value=${user} onInput=${(e: Event) => setUser((e.target as HTMLInputElement).value)} /></label>
          <label>Password <input id="password" type="password" autocomplete="current-password" required value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} /></label>
          ${plain &&
          html`<p class="note" id="plain-note">This page is plain HTTP: a Basic password crosses the network readable by anyone on the way. Open the dashboard over HTTPS, or sign in with a token.</p>
            <label class="radio"><input id="plain-ok" type="checkbox" required checked=${plainOk} onChange=${(e: Event) => setPlainOk((e.target as HTMLInputElement).checked)} /> Send my password over plain HTTP anyway (the node must allow Basic without TLS)</label>`}`}
        <button type="submit" disabled=${props.busy}>${props.busy ? "Signing in…" : "Sign in"}</button>
        ${props.error && html`<p class="error" role="alert" id="login-error">Sign-in failed: ${props.error}</p>`}
        <p id="login-note" class="note">The credential stays in this tab's session storage and is sent only to this node.</p>
      </form>
    </main>
  `;
}
