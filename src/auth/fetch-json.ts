// A small JSON GET with a timeout and a body cap, for the OIDC discovery document and key set.
import { OIDC_FETCH_BYTES_MAX, OIDC_FETCH_TIMEOUT_MS } from "./auth-limits.js";

/** Fetches `url` and parses its JSON body; rejects on any network, status or parse failure. */
export type FetchJson = (url: string) => Promise<unknown>;

export interface FetchJsonOptions {
  /** Default OIDC_FETCH_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Default OIDC_FETCH_BYTES_MAX. */
  readonly bytesMax?: number;
}

/** A FetchJson over the global fetch. */
export function httpFetchJson(opts: FetchJsonOptions = {}): FetchJson {
  const timeoutMs = opts.timeoutMs ?? OIDC_FETCH_TIMEOUT_MS;
  const bytesMax = opts.bytesMax ?? OIDC_FETCH_BYTES_MAX;
  return async (url) => {
    const res = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`GET ${url} answered ${res.status}`);
    }
    const body = await readCapped(res, bytesMax, url);
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new Error(`GET ${url} did not answer JSON`);
    }
  };
}

async function readCapped(res: Response, bytesMax: number, url: string): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > bytesMax) {
    await res.body?.cancel();
    throw new Error(`GET ${url}: body larger than ${bytesMax} bytes`);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > bytesMax) {
      await reader.cancel();
      throw new Error(`GET ${url}: body larger than ${bytesMax} bytes`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString("utf8");
}
