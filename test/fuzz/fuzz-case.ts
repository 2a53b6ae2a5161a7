// One fuzz case: bytes for one connection to one listener, kept as structured parts so fast-check
// can shrink them, and JSON-serialisable so a failing case is saved in the corpus as it is.

export type Listener = "client" | "mgmt" | "dist";

/** How the body is framed on the wire. */
export type Framing =
  /** one correct Content-Length (none when there is no body) */
  | "length"
  /** Transfer-Encoding: chunked */
  | "chunked"
  /** two Content-Length headers with different values */
  | "duplicate-length"
  /** Content-Length and Transfer-Encoding together (a smuggling attempt) */
  | "length-and-chunked"
  /** a Content-Length larger than the body, then the client half-closes */
  | "truncated";

export interface HttpCase {
  kind: "http";
  listener: Listener;
  /** The operation the request was generated from (for its documented statuses), if any. */
  operation?: string;
  method: string;
  /** The request target exactly as sent (already percent-encoded, or deliberately not). */
  target: string;
  headers: [string, string][];
  /** Body bytes, base64 (JSON-serialisable). */
  body: string;
  framing: Framing;
  /** What was done to a valid request (empty: none). */
  mutations: string[];
}

/** Raw bytes for the dist listener (junk before the HTTP/2 preface and the like). */
export interface BytesCase {
  kind: "bytes";
  listener: Listener;
  /** base64 */
  bytes: string;
  mutations: string[];
}

/**
 * One HTTP/2 stream on the dist listener, mostly the Exchange path: headers, then the request
 * body written piece by piece (Connect envelopes, whole, cut, lying about their length, or junk),
 * then the end of the request or a reset (stream-case.ts).
 */
export interface StreamCase {
  kind: "h2";
  listener: "dist";
  path: string;
  headers: [string, string][];
  /** The body's pieces in the order written, each base64. */
  pieces: string[];
  /** How the caller leaves: it ends the request, or resets the stream after every piece or after half of them. */
  finish: "end" | "reset" | "reset-early";
  mutations: string[];
}

export type FuzzCase = HttpCase | BytesCase | StreamCase;

export function bodyBytes(c: HttpCase): Buffer {
  return Buffer.from(c.body, "base64");
}

/** The bytes of an HTTP/1.1 request with Connection: close, framed as the case says. */
export function serialize(c: HttpCase, hostPort: string): { bytes: Buffer; halfClose: boolean } {
  const body = bodyBytes(c);
  const lines = [`${c.method} ${c.target} HTTP/1.1`, `Host: ${hostPort}`, "Connection: close"];
  for (const [name, value] of c.headers) lines.push(`${name}: ${value}`);
  let payload = body;
  switch (c.framing) {
    case "length":
      if (body.length > 0 || ["POST", "PUT", "PATCH"].includes(c.method)) lines.push(`Content-Length: ${body.length}`);
      break;
    case "chunked":
      lines.push("Transfer-Encoding: chunked");
      payload = Buffer.concat([body.length > 0 ? Buffer.from(`${body.length.toString(16)}\r\n`) : Buffer.alloc(0), body, body.length > 0 ? Buffer.from("\r\n") : Buffer.alloc(0), Buffer.from("0\r\n\r\n")]);
      break;
    case "duplicate-length":
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
      break;
    case "length-and-chunked":
      lines.push(`Content-Length: ${body.length}`, "Transfer-Encoding: chunked");
      break;
    case "truncated":
      lines.push(`Content-Length: ${body.length + 1 + (body.length >> 1)}`);
      break;
  }
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  return { bytes: Buffer.concat([head, payload]), halfClose: c.framing === "truncated" };
}

/** A short description for logs and corpus file names. */
export function describe(c: FuzzCase): string {
  if (c.kind === "bytes") return `${c.listener} bytes(${Buffer.from(c.bytes, "base64").length}) [${c.mutations.join(",")}]`;
  if (c.kind === "h2") return `${c.listener} h2 ${c.path.slice(0, 80)} ${c.pieces.length} pieces, ${c.finish} [${c.mutations.join(",")}]`;
  return `${c.listener} ${c.method} ${c.target.slice(0, 80)} [${c.mutations.join(",")}]`;
}
