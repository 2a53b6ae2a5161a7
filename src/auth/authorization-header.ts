// Parsing of the Authorization header into the credential it carries. Never throws: anything
// that is not a well-formed Bearer or Basic credential comes back as `invalid`, which the chain
// answers with 401.
import { isBearerToken } from "../core/bearer-token.js";
import { AUTH_HEADER_BYTES_MAX } from "./auth-limits.js";

export type Credential =
  | { readonly kind: "none" }
  | { readonly kind: "bearer"; readonly token: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string }
  | { readonly kind: "invalid"; readonly reason: string };

const NONE: Credential = Object.freeze({ kind: "none" });
/** Scheme, then one or more spaces, then the credential; the header value is already trimmed by node:http. */
const SCHEME = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?: +(.*))?$/s;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The credential of an Authorization header value (undefined when the header is absent). */
export function parseAuthorization(value: string | undefined): Credential {
  if (value === undefined) return NONE;
  if (value.length > AUTH_HEADER_BYTES_MAX) return invalid("Authorization header too long");
  const m = SCHEME.exec(value.trim());
  if (!m) return invalid("malformed Authorization header");
  const scheme = (m[1] as string).toLowerCase();
  const rest = (m[2] ?? "").trim();
  if (scheme === "bearer") {
    if (!isBearerToken(rest)) return invalid("malformed Bearer credential");
    return { kind: "bearer", token: rest };
  }
  if (scheme === "basic") return parseBasic(rest);
  return invalid("unsupported authorization scheme; use Bearer or Basic");
}

function parseBasic(encoded: string): Credential {
  if (!BASE64.test(encoded)) return invalid("malformed Basic credential");
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(encoded, "base64"));
  } catch {
    return invalid("malformed Basic credential");
  }
  const colon = decoded.indexOf(":");
  if (colon <= 0) return invalid("malformed Basic credential");
  return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function invalid(reason: string): Credential {
  return { kind: "invalid", reason };
}
