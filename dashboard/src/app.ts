// The dashboard's shell: login, the identity's scopes, the live event stream, navigation by
// hash (#/members) and the views. The server enforces scopes on every call; the shell only hides
// what the identity cannot use.
import { html } from "htm/preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Api, ApiError, type Identity } from "./api.js";
import type { MembersView } from "./schemas.js";
import { forgetCredential, loadCredential, saveCredential, type Credential } from "./credential.js";
import { openEventStream, type StreamStatus } from "./event-stream.js";
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

export function App() {
  const [credential, setCredential] = useState<Credential | undefined>(() => loadCredential(sessionStorage));
  const [identity, setIdentity] = useState<Identity | undefined>();
  const [loginError, setLoginError] = useState<string | undefined>();
  const [view, setView] = useState<ViewId>(currentView);
  const api = useMemo(() => (credential ? new Api(location.origin, credential) : undefined), [credential]);

  useEffect(() => {
    const onHash = () => setView(currentView());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    if (!api) return;
    let cancelled = false;
    api.me().then(
      (me) => !cancelled && setIdentity(me),
      (err: unknown) => {
        if (cancelled) return;
        forgetCredential(sessionStorage);
        setCredential(undefined);
        setLoginError(err instanceof ApiError ? `${err.message} (${err.code})` : String(err));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api]);

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

  if (!api || !identity) {
    return html`<${Login} onLogin=${login} error=${loginError} busy=${api !== undefined && !loginError} />`;
  }
  return html`<${Signed} api=${api} identity=${identity} view=${view} onLogout=${logout} />`;
}

function Signed(props: { api: Api; identity: Identity; view: ViewId; onLogout: () => void }) {
  const { api, identity, view } = props;
  const isAdmin = identity.scopes.includes("admin");
  const [status, setStatus] = useState<StreamStatus>({ state: "connecting" });
  const history = useRef(new RateHistory()).current;
  const [live, setLive] = useState<Live>({ members: undefined, membersAtMs: 0, metrics: undefined, history, tick: 0 });

  useEffect(
    () =>
      openEventStream(new URL("/cluster/events", location.origin).href, api.authorization, {
        onStatus: setStatus,
        onEvent: (type, data) => {
          if (type === "members") {
            performance.clearMarks("hc:members-frame");
            performance.mark("hc:members-frame");
            const members = JSON.parse(data) as MembersView;
            setLive((l) => ({ ...l, members, membersAtMs: Date.now() }));
          } else if (type === "heartbeat") {
            const metrics = JSON.parse(data) as Record<string, number>;
            history.add(Date.now(), metrics);
            setLive((l) => ({ ...l, metrics, tick: l.tick + 1 }));
          }
        },
      }),
    [api, history],
  );

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
      ${shown === "overview" && html`<${Overview} api=${api} live=${live} />`}
      ${shown === "members" && html`<${Members} live=${live} />`}
      ${shown === "ring" && html`<${Ring} api=${api} live=${live} />`}
      ${shown === "metrics" && html`<${Metrics} live=${live} />`}
      ${shown === "hints" && html`<${Hints} api=${api} />`}
      ${shown === "keys" && html`<${Keys} api=${api} />`}
      ${shown === "admin" && isAdmin && html`<${Admin} api=${api} live=${live} />`}
    </main>
  `;
}
