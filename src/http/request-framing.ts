// Request framing Node's parser accepts but the listeners refuse, with the error envelope and the
// connection closed (the body is never read): more than HTTP_HEADER_LINES_MAX header lines (Node's
// own count limit drops the lines after it silently, so the listeners turn it off and refuse
// here: 13,000 lines of a 64 KiB head held 770 KiB per request), an HTTP/1.1 request without Host
// (Node's own answer to it is an empty 400), and a transfer coding other than `chunked`, whose
// body the node would otherwise store still encoded (RFC 9112 6.1: 501). Two Authorization or
// two Host lines are refused too (RFC 9112 3.2 for Host): Node keeps the first of each and drops
// the rest silently, so a request would be judged by a line a proxy in front may not have read.
import type { IncomingMessage } from "node:http";
import { CacheError, badRequest } from "../core/errors.js";
import { HTTP_HEADER_LINES_MAX } from "../core/limits.js";

/** The first header named twice among those Node would keep one of: "Authorization" or "Host". */
function repeatedSingleHeader(raw: readonly string[]): string | undefined {
  let authorization = 0;
  let host = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // Lengths first: most lines are neither, and this runs on every request.
    if (name.length === 13 && name.toLowerCase() === "authorization" && ++authorization > 1) return "Authorization";
    if (name.length === 4 && name.toLowerCase() === "host" && ++host > 1) return "Host";
  }
  return undefined;
}

export function framingError(req: IncomingMessage): CacheError | undefined {
  const raw = req.rawHeaders;
  if (raw.length > 2 * HTTP_HEADER_LINES_MAX) return badRequest(`a request may carry at most ${HTTP_HEADER_LINES_MAX} header lines; this one has ${raw.length / 2}`);
  const repeated = repeatedSingleHeader(raw);
  if (repeated !== undefined) return badRequest(`a request may carry at most one ${repeated} header`);
  const coding = req.headers["transfer-encoding"];
  if (coding !== undefined && coding.trim().toLowerCase() !== "chunked") {
    return new CacheError("NOT_IMPLEMENTED", `transfer coding ${JSON.stringify(coding)} is not supported: send the body with Content-Length or Transfer-Encoding: chunked`);
  }
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) return badRequest("an HTTP/1.1 request must carry a Host header");
  return undefined;
}
