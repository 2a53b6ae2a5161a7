// Calls to the management listener that served the page (same origin: the CSP allows no other).
// Identity and members go through the SDK (@hypercache/client's browser build); the routes the
// SDK has no method for are plain fetch calls. Every failure becomes an ApiError carrying the
// server's envelope {error, code, details?}.
import { HypercacheClient, type Identity, type MembersView } from "@hypercache/client";
import { authorization, type Credential } from "./credential.js";

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

export type { Identity, MembersView };

export class Api {
  private readonly sdk: HypercacheClient;
  private readonly auth: string | undefined;

  constructor(
    private readonly origin: string,
    credential: Credential,
  ) {
    this.auth = authorization(credential);
    this.sdk = new HypercacheClient({
      endpoints: [origin],
      managementEndpoints: [origin],
      discovery: false,
      randomStart: false,
      ...(credential.kind === "bearer" ? { token: credential.token } : {}),
      // The server decides whether it takes Basic over plain http (allow_basic_without_tls).
      ...(credential.kind === "basic" ? { basic: { username: credential.user, password: credential.password }, allowInsecureBasic: true } : {}),
    });
  }

  /** The Authorization header, for the event stream. */
  get authorization(): string | undefined {
    return this.auth;
  }

  async me(): Promise<Identity> {
    return this.viaSdk(() => this.sdk.me());
  }

  async members(): Promise<MembersView> {
    return this.viaSdk(() => this.sdk.members());
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.call<T>("GET", path, signal);
  }

  post<T>(path: string): Promise<T> {
    return this.call<T>("POST", path);
  }

  /** Health answers 503 while draining with a normal body: both are results, not errors. */
  async health(): Promise<{ status: string; draining: boolean; catching_up: boolean }> {
    const r = await fetch(new URL("/health", this.origin), { cache: "no-store" });
    return (await r.json()) as { status: string; draining: boolean; catching_up: boolean };
  }

  close(): void {
    this.sdk.close();
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

  private async viaSdk<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (err) {
      const e = err as { status?: number; code?: string; message?: string; details?: Record<string, unknown> };
      throw new ApiError(e.status ?? 0, e.code ?? "NETWORK", e.message ?? String(err), e.details);
    }
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
