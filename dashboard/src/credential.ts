// The login credential: Bearer token, Basic user and password, or none (anonymous or mTLS).
// Kept in sessionStorage only, so it ends with the tab and is never written to disk storage. The
// SDK sends it (credentialOptions): as `Authorization: Bearer`, as `Authorization: Basic`, or not at all.
import type { ClientOptions } from "@hypercache/client/browser";

export type Credential =
  | { readonly kind: "bearer"; readonly token: string }
  /** `plainHttp`: the user agreed to send the password over a page served without TLS. */
  | { readonly kind: "basic"; readonly user: string; readonly password: string; readonly plainHttp?: true }
  | { readonly kind: "none" };

const KEY = "hypercache.dashboard.credential";

/** The part of the Web Storage API used here (sessionStorage in the page). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The SDK client options of a credential: a bearer token, a Basic user, or nothing to send. */
export function credentialOptions(c: Credential): Pick<ClientOptions, "token" | "basic" | "allowInsecureBasic"> {
  if (c.kind === "bearer") return { token: c.token };
  // Over plain http only when the user said so at sign-in (views/login.ts): the page sent the
  // password readable on the wire to a node whose policy then refused Basic without TLS anyway.
  if (c.kind === "basic") return { basic: { username: c.user, password: c.password }, allowInsecureBasic: c.plainHttp === true };
  return {};
}

export function loadCredential(storage: KeyValueStore): Credential | undefined {
  const raw = storage.getItem(KEY);
  if (raw === null) return undefined;
  try {
    const c = JSON.parse(raw) as Credential;
    if (c.kind === "bearer" || c.kind === "basic" || c.kind === "none") return c;
  } catch {
    // A damaged entry is dropped below.
  }
  storage.removeItem(KEY);
  return undefined;
}

export function saveCredential(storage: KeyValueStore, c: Credential): void {
  storage.setItem(KEY, JSON.stringify(c));
}

export function forgetCredential(storage: KeyValueStore): void {
  storage.removeItem(KEY);
}
