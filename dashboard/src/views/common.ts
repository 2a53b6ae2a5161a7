// Small pieces shared by the views.
import { html } from "htm/preact";
import type { Problem } from "../api.js";

export function ErrorNote(props: { error: Problem | undefined; what: string }) {
  if (!props.error) return null;
  return html`<p class="error" role="alert">Could not load ${props.what}: ${props.error.message} (${props.error.code})</p>`;
}

export function StateBadge(props: { state: string; draining?: boolean }) {
  return html`<span class=${`badge state-${props.state}`}>${props.state}</span>${props.draining ? html` <span class="badge state-draining">draining</span>` : null}`;
}
