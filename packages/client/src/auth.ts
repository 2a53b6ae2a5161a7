// Credentials: a bearer token (a string or an async provider), HTTP Basic (refused over http:
// unless allowed), or OIDC client credentials (oidc-client-credentials.ts). Client certificates
// (mTLS) live in the transport of `@hypercache/client/node`, not here.
import { ClientConfigError } from "./errors.js";
import { encodeBase64 } from "./base64.js";

/** Supplies the Authorization header of each attempt. */
export interface AuthProvider {
  /** The header value for a request to `endpoint`, or undefined to send none. */
  authorization(endpoint: string): string | undefined | Promise<string | undefined>;
  /**
   * Called once after a 401 with the header value that was refused; resolves true when a fresh
   * credential is ready and the request is worth one more try on the same endpoint.
   */
  refreshAfterUnauthorized?(refused: string | undefined): Promise<boolean>;
}

/** A bearer token, or a function that returns the current one (called for every attempt). */
export type BearerToken = string | (() => string | Promise<string>);

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

export const noAuth: AuthProvider = Object.freeze({ authorization: () => undefined });

/** True when `text` holds a character no header can carry: a control (CR and LF would split it) or one outside Latin-1. */
function unfitForHeader(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c > 0xff) return true;
  }
  return false;
}

/** `Bearer <token>`, or a ClientConfigError for a token no header can carry. */
function bearerHeader(token: string): string {
  if (token === "") throw new ClientConfigError("the bearer token is empty");
  if (unfitForHeader(token)) throw new ClientConfigError("the bearer token holds a control character (CR, LF, ...) or a character outside Latin-1: it cannot be sent in a header");
  return `Bearer ${token}`;
}

export function bearerAuth(token: BearerToken): AuthProvider {
  if (typeof token === "string") {
    const header = bearerHeader(token);
    return { authorization: () => header };
  }
  return {
    async authorization() {
      return bearerHeader(await token());
    },
  };
}

/** True when credentials sent to `url` would cross the network in clear text. */
export function isPlaintext(url: string): boolean {
  return /^http:/i.test(url.trimStart());
}

/**
 * HTTP Basic. Over `http:` the password would travel in clear text, so every such endpoint is
 * refused (a ClientConfigError for a seed, never adopted from discovery) unless `allowInsecure`.
 */
export function basicAuth(creds: BasicCredentials, allowInsecure: boolean): AuthProvider {
  if (creds.username.includes(":")) throw new ClientConfigError("a Basic user name cannot contain ':'");
  const header = `Basic ${encodeBase64(new TextEncoder().encode(`${creds.username}:${creds.password}`))}`;
  return {
    authorization(endpoint) {
      if (!allowInsecure && isPlaintext(endpoint)) {
        throw new ClientConfigError(`refusing to send Basic credentials over plain http to ${endpoint} (set allowInsecureBasic to allow it)`);
      }
      return header;
    },
  };
}
