// Reading request bodies with a size limit: raw bytes for PUT, JSON for the batch routes.
import type { IncomingMessage } from "node:http";
import getRawBody from "raw-body";
import { CacheError, badRequest } from "../core/errors.js";

/**
 * After refusing an oversized body, reads and discards the rest of it (up to `capBytes` more), so
 * the client still reads its 413 answer and the connection stays usable; past the cap the
 * connection is closed.
 */
function discardRest(req: IncomingMessage, capBytes: number): void {
  let seen = 0;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > capBytes) req.socket.destroy();
  });
  req.resume();
}

/** Reads the whole body; 413 PAYLOAD_TOO_LARGE past `limitBytes`. */
export async function readRawBody(req: IncomingMessage, limitBytes: number, what = "body"): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes) {
    discardRest(req, limitBytes);
    throw tooLarge(what, limitBytes);
  }
  try {
    return await getRawBody(req, { limit: limitBytes, length: declared });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") {
      discardRest(req, limitBytes);
      throw tooLarge(what, limitBytes);
    }
    if (type === "request.size.invalid") throw badRequest("request body is shorter or longer than its Content-Length");
    if (type === "request.aborted") throw new CacheError("BAD_REQUEST", "request aborted by the client");
    throw err;
  }
}

function tooLarge(what: string, limitBytes: number): CacheError {
  return new CacheError("PAYLOAD_TOO_LARGE", `${what} is larger than ${limitBytes} bytes`, { limit_bytes: limitBytes });
}

/** Reads and parses a JSON body; 415 unless the content type is JSON, 400 when malformed. */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json" && !(type.startsWith("application/") && type.endsWith("+json"))) {
    throw new CacheError("UNSUPPORTED_MEDIA_TYPE", `request body must be application/json; got ${JSON.stringify(type || "none")}`);
  }
  const raw = await readRawBody(req, limitBytes, "request body");
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
}
