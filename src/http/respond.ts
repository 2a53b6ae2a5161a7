// Writing answers straight to node:http responses: JSON bodies and the error envelope
// `{ error, code, details? }`. Used by the hot routes and by the Koa error middleware.
import type { ServerResponse } from "node:http";
import type { CacheError } from "../core/errors.js";
import { BodyTooLarge } from "./body.js";

/** The error envelope of every error answer. */
export interface ErrorEnvelope {
  error: string;
  code: string;
  details?: Record<string, unknown>;
}

export function envelopeOf(err: CacheError): ErrorEnvelope {
  return err.details === undefined ? { error: err.message, code: err.code } : { error: err.message, code: err.code, details: err.details };
}

/** Writes a JSON body (or only its headers for HEAD), head and body in one write. */
export function writeJson(res: ServerResponse, status: number, json: string, headOnly = false, extra?: readonly string[]): void {
  // A flat header list goes to writeHead as it is (no per-header setHeader bookkeeping); headers
  // set before (an error's Retry-After, a miss's owners) are kept. `extra`: more [name, value, ...].
  const headers = ["Content-Type", "application/json; charset=utf-8", "Content-Length", String(Buffer.byteLength(json))];
  if (extra !== undefined) headers.push(...extra);
  res.writeHead(status, headers);
  if (headOnly) res.end();
  else res.end(json);
}

/** Writes the error envelope. 401 answers carry `challenge` as WWW-Authenticate. */
export function writeError(res: ServerResponse, err: CacheError, opts: { headOnly?: boolean; challenge?: string } = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.code === "UNAUTHORIZED" && opts.challenge) res.setHeader("WWW-Authenticate", opts.challenge);
  if (err.retryAfterS !== undefined) res.setHeader("Retry-After", String(err.retryAfterS));
  if (err.headers !== undefined) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (closesConnection(err)) res.setHeader("Connection", "close");
  writeJson(res, err.status, JSON.stringify(envelopeOf(err)), opts.headOnly);
}

/** True when the error left the request body unread: the connection ends after the answer. */
export function closesConnection(err: CacheError): boolean {
  return err instanceof BodyTooLarge && err.closeConnection;
}
