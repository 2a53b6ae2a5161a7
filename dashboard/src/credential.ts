// The login credential: Bearer token, Basic user and password, or none (anonymous or mTLS).
// Kept in sessionStorage only, so it ends with the tab and is never written to disk storage.
export type Credential =
  | { readonly kind: "bearer"; readonly token: string }
  | { readonly kind: "basic"; readonly user: string; readonly password: string }
  | { readonly kind: "none" };

const KEY = "hypercache.dashboard.credential";

/** The part of the Web Storage API used here (sessionStorage in the page). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The Authorization header value, or undefined for none. */
export function authorization(c: Credential): string | undefined {
  if (c.kind === "bearer") return `Bearer ${c.token}`;
  if (c.kind === "basic") return `Basic ${utf8Base64(`${c.user}:${c.password}`)}`;
  return undefined;
}

function utf8Base64(text: string): string {
  let bin = "";
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin);
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
