// Scopes from an OIDC token claim: a space-separated string ("read write") or an array of
// strings. Values other than read, write and admin are dropped silently (SPEC.md), so an
// identity provider can carry other applications' scopes in the same claim.
import { isScope, type Scope } from "./identity.js";

/** The service scopes a claim value carries; anything unrecognised gives none. */
export function scopesFromClaim(value: unknown): Scope[] {
  const words = typeof value === "string" ? value.split(/\s+/) : Array.isArray(value) ? value : [];
  const out = new Set<Scope>();
  for (const w of words) if (isScope(w)) out.add(w);
  return [...out];
}
