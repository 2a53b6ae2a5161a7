// Writing answers straight to node:http responses: JSON bodies and the error envelope
// `{ error, code, details? }`. Used by the hot routes and by the Koa error middleware.
import type { ServerResponse } from "node:http";
import type { CacheError } from "../core/errors.js";

/** The error envelope of every error answer. */
export interface ErrorEnvelope {
  error: string;
  code: string;
  details?: Record<string, unknown>;
}

export function envelopeOf(err: CacheError): ErrorEnvelope {
  return err.details === undefined ? { error: err.message, code: err.code } : { error: err.message, code: err.code, details: err.details };
}

/** Writes a JSON body (or only its headers for HEAD). */
export function writeJson(res: ServerResponse, status: number, json: string, headOnly = false): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(json));
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
  writeJson(res, err.status, JSON.stringify(envelopeOf(err)), opts.headOnly);
}
