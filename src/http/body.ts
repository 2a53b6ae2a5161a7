// Reading request bodies with a size limit: raw bytes for PUT, JSON for the batch routes. A JSON
// body can be scanned while it arrives (json-body-scanner.ts), so a batch body is refused at the
// first element past the batch limit instead of after parsing all of it.
import { isUtf8 } from "node:buffer";
import { TextDecoder } from "node:util";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ClientBytesBudget } from "./client-bytes-budget.js";
import { CacheError, badRequest } from "../core/errors.js";
import { JsonBodyScanner, type JsonScanLimits } from "./json-body-scanner.js";
import { discardRest } from "./unread-body.js";

/**
 * A refused oversized body. `closeConnection` is set when the rest of the body is not read: the
 * answer then carries `Connection: close` and the connection ends after it.
 */
export class BodyTooLarge extends CacheError {
  constructor(what: string, limitBytes: number, readonly closeConnection: boolean) {
    super("PAYLOAD_TOO_LARGE", `${what} is larger than ${limitBytes} bytes`, { limit_bytes: limitBytes });
  }
}

/** Refuses a declared Content-Length past the limit before reading anything (413). */
function refuseDeclared(declared: string | undefined, req: IncomingMessage, limitBytes: number, what: string): void {
  if (declared !== undefined && Number(declared) > limitBytes) {
    // A declared length past the discard cap is not read at all: answer and close.
    const drain = Number(declared) <= 2 * limitBytes;
    if (drain) discardRest(req, 0, 2 * limitBytes);
    throw new BodyTooLarge(what, limitBytes, !drain);
  }
}

/**
 * Reads the whole body; 413 PAYLOAD_TOO_LARGE past `limitBytes`. With `budget` and the request's
 * `res`, its bytes are counted as they arrive (ClientBytesBudget.bodyCounter), asked once the
 * declared length (and a JSON body's type) passed their own checks, so a body that can only get
 * 413 or 415 gets that, not a 503 for a busy budget; 503 at the chunk that would pass the budget.
 */
export function readRawBody(req: IncomingMessage, limitBytes: number, what = "body", budget?: ClientBytesBudget, res?: ServerResponse): Promise<Buffer> {
  return readInspectedBody(req, limitBytes, what, undefined, budget, res);
}

/**
 * Reads the whole body, handing every chunk to `inspect` (when given) as it arrives. When
 * `inspect` throws, reading stops and that error is the answer; the rest of the body is then
 * discarded like an oversized one (read while within twice the limit, else the connection
 * closes). Three listeners per body: a client that goes away shows as `close` before the end
 * (node:http emits `error` on a request only when it has an error listener). When `count`
 * refuses a chunk (the listener holds too many bytes), reading stops and the rest of the body is
 * left unread: the connection ends after the 503 (listener-response.ts).
 */
function readInspectedBody(
  req: IncomingMessage,
  limitBytes: number,
  what: string,
  inspect: ((chunk: Buffer) => void) | undefined,
  budget?: ClientBytesBudget,
  res?: ServerResponse,
  keep = true,
): Promise<Buffer> {
  const declared = req.headers["content-length"];
  refuseDeclared(declared, req, limitBytes, what);
  const count = budget && res ? budget.bodyCounter(res, declared === undefined ? undefined : Number(declared)) : undefined;
  return new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (err: unknown, body?: Buffer, discard = false) => {
      if (settled) return;
      settled = true;
      if (discard) {
        req.off("data", onData);
        discardRest(req, received, 2 * limitBytes);
      }
      if (body !== undefined) resolve(body);
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > limitBytes) return settle(new BodyTooLarge(what, limitBytes, false), undefined, true);
      if (count !== undefined) {
        try {
          count(chunk.length);
        } catch (err) {
          req.off("data", onData);
          return settle(err);
        }
      }
      if (inspect !== undefined) {
        try {
          inspect(chunk);
        } catch (err) {
          return settle(err, undefined, true);
        }
      }
      if (keep) parts.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && received !== Number(declared)) settle(badRequest("request body is shorter or longer than its Content-Length"));
      // One chunk (a small body) is the body itself: no copy. Not kept: the inspector took it.
      else settle(undefined, !keep ? EMPTY : parts.length === 1 ? parts[0] : Buffer.concat(parts, received));
    };
    const onClose = () => {
      if (!req.complete) settle(new CacheError("BAD_REQUEST", "request aborted by the client"));
    };
    req.on("data", onData).on("end", onEnd).on("close", onClose);
  });
}

/** How a JSON body is scanned while it arrives (see JsonBodyScanner); omitted: not scanned. */
export type JsonBodyScan = JsonScanLimits;

/**
 * Reads and parses a JSON body; 415 unless the content type is JSON, 400 when malformed, and
 * 400 as soon as the scanned shape passes one of `scan`'s limits (before anything is parsed).
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number, scan?: JsonBodyScan, budget?: ClientBytesBudget, res?: ServerResponse): Promise<unknown> {
  checkJsonType(req);
  // Decoded as the chunks arrive: one decode of a 16 MiB body of multi-byte text held the loop
  // 75 ms (a review: a batch put of emoji values, /healthz 132-147 ms with the parse and the
  // conversions). Fatal: invalid UTF-8 is refused, not turned into U+FFFD inside keys and values;
  // a BOM is kept, so JSON.parse refuses it as it did.
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const text: string[] = [];
  const scanner = scan ? scannerFor(scan) : undefined;
  const inspect = (chunk: Buffer) => {
    scanner?.(chunk);
    text.push(decodeChunk(decoder, chunk, true));
  };
  await readInspectedBody(req, limitBytes, "request body", inspect, budget, res, false);
  text.push(decodeChunk(decoder, undefined, false));
  try {
    return JSON.parse(text.join(""));
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
}

const EMPTY = Buffer.alloc(0);

/** One step of a fatal streaming decode; 400 on invalid UTF-8 (a cut sequence at the end included). */
function decodeChunk(decoder: TextDecoder, chunk: Buffer | undefined, stream: boolean): string {
  try {
    return decoder.decode(chunk, { stream });
  } catch {
    throw badRequest("request body is not valid UTF-8");
  }
}

/**
 * A small optional JSON body: undefined when it has no bytes (a chunked body of none included),
 * else as readJsonBody reads it (the content type is checked once there are bytes).
 */
export async function readOptionalJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const raw = await readInspectedBody(req, limitBytes, "request body", undefined);
  if (raw.length === 0) return undefined;
  checkJsonType(req);
  return parseJson(raw);
}

/** 415 unless the content type is JSON (application/json or application/*+json). */
function checkJsonType(req: IncomingMessage): void {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json" && !(type.startsWith("application/") && type.endsWith("+json"))) {
    throw new CacheError("UNSUPPORTED_MEDIA_TYPE", `request body must be application/json; got ${JSON.stringify(type || "none")}`);
  }
}

function parseJson(raw: Buffer): unknown {
  // Invalid UTF-8 is refused, not silently turned into U+FFFD inside keys and values.
  if (!isUtf8(raw)) throw badRequest("request body is not valid UTF-8");
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
}

function scannerFor(limits: JsonScanLimits): (chunk: Buffer) => void {
  const scanner = new JsonBodyScanner(limits);
  return (chunk) => scanner.push(chunk);
}
