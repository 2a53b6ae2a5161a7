// The single-key byte routes (GET, HEAD and PUT of `/v1/cache/{key}`, and the release of its
// stampede lease) sent straight through the failover transport. Every other call goes through
// openapi-fetch; these do not because they are the hot path and carry opaque bytes, not JSON:
// openapi-fetch's per-call Request and Headers objects cost about 10 µs of client CPU per request
// in Node (bench/sdk.ts), a third of a bare undici request, and `get` must stay within 0.9 of a
// bare undici loop. Paths and query parameters are still typed by the generated OpenAPI types.
import type { Answer, BufferedResponse, FailoverTransport } from "./failover-transport.js";
import type { paths } from "./gen/client.js";
import { encodeKeySegment } from "./openapi-bridge.js";

type ItemRoute = paths["/v1/cache/{key}"];
type GetQuery = NonNullable<ItemRoute["get"]["parameters"]["query"]>;
type HeadQuery = NonNullable<ItemRoute["head"]["parameters"]["query"]>;
type PutQuery = NonNullable<ItemRoute["put"]["parameters"]["query"]>;

const ITEM_PREFIX = "/v1/cache/";
const ACCEPT_BYTES: Readonly<Record<string, string>> = Object.freeze({ accept: "application/octet-stream" });
const PUT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "content-type": "application/octet-stream" });

function itemPath(key: string, query: Record<string, string | undefined>): string {
  let path = ITEM_PREFIX + encodeKeySegment(key);
  let sep = "?";
  for (const name in query) {
    const v = query[name];
    if (v === undefined) continue;
    path += `${sep}${name}=${encodeURIComponent(v)}`;
    sep = "&";
  }
  return path;
}

/** The answer of a byte route: always read to its end (never a stream). */
export interface ByteAnswer extends Answer {
  readonly response: BufferedResponse;
}

/**
 * Not async: each method hands back the transport's promise, so a call costs no promise of its own
 * on top of the transport's (the caller reads `response`).
 */
export class ByteRoutes {
  constructor(private readonly transport: FailoverTransport) {}

  get(key: string, consistency: GetQuery["consistency"], signal: AbortSignal | undefined): Promise<ByteAnswer> {
    const path = consistency === undefined ? ITEM_PREFIX + encodeKeySegment(key) : itemPath(key, { consistency });
    return this.transport.send({ method: "GET", path, headers: ACCEPT_BYTES as Record<string, string>, signal }) as Promise<ByteAnswer>;
  }

  /** A GET with query parameters beyond the consistency (a lease read's `lease` and `wait`). */
  getWith(key: string, query: GetQuery, signal: AbortSignal | undefined): Promise<ByteAnswer> {
    return this.transport.send({ method: "GET", path: itemPath(key, query), headers: ACCEPT_BYTES as Record<string, string>, signal }) as Promise<ByteAnswer>;
  }

  head(key: string, query: HeadQuery, signal: AbortSignal | undefined): Promise<ByteAnswer> {
    return this.transport.send({ method: "HEAD", path: itemPath(key, query), headers: {}, signal }) as Promise<ByteAnswer>;
  }

  /**
   * Gives a stampede lease back unfilled (DELETE /v1/cache/{key}/lease: 204, or 409 when it is not
   * held): one attempt that leaves the endpoints' health alone (FailoverTransport.sendUntracked).
   */
  releaseLease(key: string, token: string): Promise<unknown> {
    const path: `/v1/cache/${string}/lease` = `${ITEM_PREFIX}${encodeKeySegment(key)}/lease`;
    return this.transport.sendUntracked({ method: "DELETE", path, headers: { "x-cache-lease": token }, signal: undefined });
  }

  /** `conditions`: the If-Match / If-None-Match headers of a conditional write. */
  put(key: string, body: string | Uint8Array, query: PutQuery, signal: AbortSignal | undefined, conditions?: Readonly<Record<string, string>>): Promise<ByteAnswer> {
    const headers = conditions === undefined ? (PUT_HEADERS as Record<string, string>) : { ...PUT_HEADERS, ...conditions };
    return this.transport.send({ method: "PUT", path: itemPath(key, query), headers, body, signal }) as Promise<ByteAnswer>;
  }
}
