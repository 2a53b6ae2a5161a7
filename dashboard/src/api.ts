// Calls to the management listener that served the page (same origin: the CSP allows no other).
// Plain fetch with the credential's Authorization header: every route the dashboard reads is
// management-only (GET /me, /cluster/ring, /cluster/keys, ...) and the SDK's event watch
// reconnects silently, where the dashboard must show the drop (see README, Dashboard). Every
// failure becomes an ApiError carrying the server's envelope {error, code, details?}.
import { authorization, type Credential } from "./credential.js";
import type { Identity } from "./schemas.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export type { Identity };

export class Api {
  private readonly auth: string | undefined;

  constructor(
    private readonly origin: string,
    credential: Credential,
  ) {
    // Basic is sent over plain http too: the server decides (allow_basic_without_tls).
    this.auth = authorization(credential);
  }

  /** The Authorization header, for the event stream. */
  get authorization(): string | undefined {
    return this.auth;
  }

  /** The caller's identity and scopes (GET /me: any authenticated identity, unlike /v1/me). */
  me(): Promise<Identity> {
    return this.get<Identity>("/me");
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.call<T>("GET", path, signal);
  }

  post<T>(path: string): Promise<T> {
    return this.call<T>("POST", path);
  }

  private async call<T>(method: string, path: string, signal?: AbortSignal): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.auth !== undefined) headers.authorization = this.auth;
    let r: Response;
    try {
      r = await fetch(new URL(path, this.origin), { method, headers, cache: "no-store", ...(signal ? { signal } : {}) });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ApiError(0, "NETWORK", `the node did not answer ${method} ${path}`);
    }
    const text = await r.text();
    if (!r.ok) throw envelopeError(r.status, text);
    return (text === "" ? {} : JSON.parse(text)) as T;
  }

}

/** The ApiError of a non-2xx answer: the envelope's fields, or the status alone. */
export function envelopeError(status: number, text: string): ApiError {
  try {
    const env = JSON.parse(text) as { error?: unknown; code?: unknown; details?: Record<string, unknown> };
    if (typeof env.error === "string" && typeof env.code === "string") return new ApiError(status, env.code, env.error, env.details);
  } catch {
    // Not an envelope: fall through.
  }
  return new ApiError(status, `HTTP_${status}`, `HTTP ${status}`);
}
