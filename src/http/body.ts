// Reading request bodies with a size limit: raw bytes for PUT, JSON for the batch routes.
import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import getRawBody from "raw-body";
import { CacheError, badRequest } from "../core/errors.js";

/**
 * A refused oversized body. `closeConnection` is set when the rest of the body is not read: the
 * answer then carries `Connection: close` and the connection ends after it.
 */
export class BodyTooLarge extends CacheError {
  constructor(what: string, limitBytes: number, readonly closeConnection: boolean) {
    super("PAYLOAD_TOO_LARGE", `${what} is larger than ${limitBytes} bytes`, { limit_bytes: limitBytes });
  }
}

/**
 * After refusing an oversized body, reads and discards the rest of it while the whole body stays
 * within `capBytes` (twice the limit), so the client reads its 413 answer and the keep-alive
 * connection stays usable; past the cap the connection is closed.
 */
function discardRest(req: IncomingMessage, alreadyRead: number, capBytes: number): void {
  let seen = alreadyRead;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > capBytes) req.socket.destroy();
  });
  req.resume();
}

/** Reads the whole body; 413 PAYLOAD_TOO_LARGE past `limitBytes`. */
export async function readRawBody(req: IncomingMessage, limitBytes: number, what = "body"): Promise<Buffer> {
  const declared = req.headers["content-length"];
  const discardCap = 2 * limitBytes;
  if (declared !== undefined && Number(declared) > limitBytes) {
    // A declared length past the discard cap is not read at all: answer and close.
    const drain = Number(declared) <= discardCap;
    if (drain) discardRest(req, 0, discardCap);
    throw new BodyTooLarge(what, limitBytes, !drain);
  }
  try {
    return await getRawBody(req, { limit: limitBytes, length: declared });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") {
      const received = (err as { received?: number }).received ?? limitBytes;
      discardRest(req, received, discardCap);
      throw new BodyTooLarge(what, limitBytes, false);
    }
    if (type === "request.size.invalid") throw badRequest("request body is shorter or longer than its Content-Length");
    if (type === "request.aborted") throw new CacheError("BAD_REQUEST", "request aborted by the client");
    throw err;
  }
}

/** Reads and parses a JSON body; 415 unless the content type is JSON, 400 when malformed. */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json" && !(type.startsWith("application/") && type.endsWith("+json"))) {
    throw new CacheError("UNSUPPORTED_MEDIA_TYPE", `request body must be application/json; got ${JSON.stringify(type || "none")}`);
  }
  const raw = await readRawBody(req, limitBytes, "request body");
  // Invalid UTF-8 is refused, not silently turned into U+FFFD inside keys and values.
  if (!isUtf8(raw)) throw badRequest("request body is not valid UTF-8");
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
}
