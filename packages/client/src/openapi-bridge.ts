// Typed requests with openapi-fetch (paths, parameters and bodies checked against the generated
// OpenAPI types), sent through the failover transport. openapi-fetch builds a request against a
// placeholder base URL; the bridge takes its path, method, headers and body and lets the transport
// choose the endpoint. A light Request class stands in for the platform's, which would copy the
// body into a stream that cannot be replayed.
import createClient, { type Client } from "openapi-fetch";
import type { BufferedResponse, FailoverTransport } from "./failover-transport.js";

/** Placeholder origin of openapi-fetch's URLs; never contacted. */
const PLACEHOLDER_BASE = "http://hypercache.invalid";

/** The request openapi-fetch builds: only what the transport reads. */
class LightRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | Uint8Array | undefined;
  readonly signal: AbortSignal | undefined;
  constructor(url: string, init: { method?: string; headers?: ConstructorParameters<typeof Headers>[0]; body?: unknown; signal?: AbortSignal | null }) {
    this.url = url;
    this.method = init.method ?? "GET";
    // openapi-fetch passes the Headers it merged: keep them rather than copy.
    this.headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
    this.body = init.body as string | Uint8Array | undefined;
    this.signal = init.signal ?? undefined;
  }
}

/**
 * Encodes a key as one path segment. `keys` would name the key browser (`/v1/cache/keys`) and `.`
 * and `..` would be removed by URL normalisation, so one of their characters is percent-encoded.
 */
export function encodeKeySegment(key: string): string {
  if (key === "keys") return "%6Beys";
  if (key === "." || key === "..") return key.replaceAll(".", "%2E");
  return encodeURIComponent(key);
}

function pathSerializer(pathname: string, params: Record<string, unknown>): string {
  let out = pathname;
  for (const name in params) {
    const v = params[name];
    const at = out.indexOf(`{${name}}`);
    if (at >= 0 && v !== undefined && v !== null) out = out.slice(0, at) + encodeKeySegment(String(v)) + out.slice(at + name.length + 2);
  }
  return out;
}

/** An openapi-fetch client for `Paths` whose requests go through `transport`. */
export function typedClient<Paths extends object>(transport: FailoverTransport): Client<Paths> {
  const fetch = async (request: LightRequest) => {
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const { response } = await transport.send({ method: request.method, path: request.url.slice(PLACEHOLDER_BASE.length), headers, body: request.body, signal: request.signal });
    return response;
  };
  return createClient<Paths>({
    baseUrl: PLACEHOLDER_BASE,
    Request: LightRequest as unknown as typeof Request,
    fetch: fetch as unknown as (input: Request) => Promise<Response>,
    pathSerializer: pathSerializer as never,
  });
}

/** The buffered answer behind an openapi-fetch `response` (the transport always returns one). */
export function buffered(response: Response): BufferedResponse {
  return response as unknown as BufferedResponse;
}
