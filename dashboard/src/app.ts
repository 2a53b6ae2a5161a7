// The dashboard's shell: login, the identity's scopes, the live event stream, navigation by
// hash (#/members) and the views. Every call goes through the SDK client of api.ts (this origin
// only). The server enforces scopes on every call; the shell only hides what the identity cannot use.
import { html } from "htm/preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { WatchStatus } from "@hypercache/client/browser";
import { createClient, problemOf, type HypercacheClient } from "./api.js";
import type { Identity, MembersView } from "./schemas.js";
import { forgetCredential, loadCredential, saveCredential, type Credential } from "./credential.js";
import { RateHistory } from "./series.js";
import { Login } from "./views/login.js";
import { Overview } from "./views/overview.js";
import { Members } from "./views/members.js";
import { Ring } from "./views/ring.js";
import { Metrics } from "./views/metrics.js";
import { Hints } from "./views/hints.js";
import { Keys } from "./views/keys.js";
import { Admin } from "./views/admin.js";
import { StreamBanner } from "./views/stream-banner.js";

export interface Live {
  readonly members: MembersView | undefined;
  /** When the last members frame arrived (ms since the epoch). */
  readonly membersAtMs: number;
  readonly metrics: Record<string, number> | undefined;
  readonly history: RateHistory;
  /** Bumped on every heartbeat frame, so charts know to redraw. */
  readonly tick: number;
}

const VIEWS = [
  { id: "overview", label: "Overview" },
  { id: "members", label: "Members" },
  { id: "ring", label: "Ring" },
  { id: "metrics", label: "Metrics" },
  { id: "hints", label: "Hints" },
  { id: "keys", label: "Keys" },
  { id: "admin", label: "Admin", admin: true },
] as const;

type ViewId = (typeof VIEWS)[number]["id"];

function currentView(): ViewId {
  const id = location.hash.replace(/^#\/?/, "").split("?")[0];
  return (VIEWS.find((v) => v.id === id)?.id ?? "overview") as ViewId;
}

/** "message (code)" of a failed sign-in. */
function signInError(err: unknown): string {
  const p = problemOf(err);
  return `${p.message} (${p.code})`;
}

/** The client of a credential, or why the credential cannot be used (an empty token, a ':' in a Basic user). */
function clientFor(credential: Credential | undefined): { client?: HypercacheClient; error?: string } {
  if (!credential) return {};
  try {
    return { client: createClient(location.origin, credential) };
  } catch (err) {
    return { error: signInError(err) };
  }
}

export function App() {
  const [credential, setCredential] = useState<Credential | undefined>(() => loadCredential(sessionStorage));
  const [identity, setIdentity] = useState<Identity | undefined>();
  const [loginError, setLoginError] = useState<string | undefined>();
  const [view, setView] = useState<ViewId>(currentView);
  const made = useMemo(() => clientFor(credential), [credential]);
  const client = made.client;

  useEffect(() => {
    const onHash = () => setView(currentView());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    /** A credential that cannot be used: forgotten, and the sign-in form says why. */
    const refuse = (why: string) => {
      forgetCredential(sessionStorage);
      setCredential(undefined);
      setLoginError(why);
    };
    if (made.error !== undefined) return refuse(made.error);
    if (!client) return;
    let cancelled = false;
    client.identity().then(
      (me) => !cancelled && setIdentity(me),
      (err: unknown) => !cancelled && refuse(signInError(err)),
    );
    return () => {
      cancelled = true;
    };
  }, [made]);

  const login = useCallback((c: Credential) => {
    saveCredential(sessionStorage, c);
    setLoginError(undefined);
    setIdentity(undefined);
    setCredential(c);
  }, []);
  const logout = useCallback(() => {
    forgetCredential(sessionStorage);
    setIdentity(undefined);
    setCredential(undefined);
  }, []);

  if (!client || !identity) {
    return html`<${Login} onLogin=${login} error=${loginError} busy=${client !== undefined && !loginError} />`;
  }
  return html`<${Signed} client=${client} identity=${identity} view=${view} onLogout=${logout} />`;
}

function Signed(props: { client: HypercacheClient; identity: Identity; view: ViewId; onLogout: () => void }) {
  const { client, identity, view } = props;
  const isAdmin = identity.scopes.includes("admin");
  const [status, setStatus] = useState<WatchStatus>({ state: "connecting" });
  const history = useRef(new RateHistory()).current;
  const [live, setLive] = useState<Live>({ members: undefined, membersAtMs: 0, metrics: undefined, history, tick: 0 });

  // The SDK's watch: reconnects with backoff and reports each state (the banner); an answer that
  // asking again cannot change (401, 403, another 4xx but 408 and 429) ends it, and its status says so.
  useEffect(() => {
    const ctrl = new AbortController();
    const follow = async () => {
      for await (const e of await client.watch({ signal: ctrl.signal, onStatus: setStatus })) {
        if (e.type === "members") {
          performance.clearMarks("hc:members-frame");
          performance.mark("hc:members-frame");
          const members = e.data;
          setLive((l) => ({ ...l, members, membersAtMs: Date.now() }));
        } else {
          const metrics = e.data;
          history.add(Date.now(), metrics);
          setLive((l) => ({ ...l, metrics, tick: l.tick + 1 }));
        }
      }
    };
    follow().catch(() => undefined);
    return () => ctrl.abort();
  }, [client, history]);

  const nav = VIEWS.filter((v) => !("admin" in v) || isAdmin);
  const shown = view === "admin" && !isAdmin ? "overview" : view;
  return html`
    <header class="top">
      <h1>hypercache <span class="node">${live.members ? live.members.node : ""}</span></h1>
      <nav aria-label="Views">
        <ul>
          ${nav.map((v) => html`<li><a href=${`#/${v.id}`} aria-current=${shown === v.id ? "page" : undefined}>${v.label}</a></li>`)}
        </ul>
      </nav>
      <div class="who">
        <span>Signed in as <strong>${identity.id}</strong> (${identity.scopes.join(", ") || "no scopes"})</span>
        <button type="button" onClick=${props.onLogout}>Sign out</button>
      </div>
    </header>
    <${StreamBanner} status=${status} />
    <main id="main" tabindex="-1">
      ${shown === "overview" && html`<${Overview} client=${client} live=${live} />`}
      ${shown === "members" && html`<${Members} live=${live} />`}
      ${shown === "ring" && html`<${Ring} client=${client} live=${live} />`}
      ${shown === "metrics" && html`<${Metrics} live=${live} />`}
      ${shown === "hints" && html`<${Hints} client=${client} />`}
      ${shown === "keys" && html`<${Keys} client=${client} />`}
      ${shown === "admin" && isAdmin && html`<${Admin} client=${client} live=${live} />`}
    </main>
  `;
}
