// Sends one case's bytes over a fresh TCP connection and reads what comes back: the first HTTP/1.1
// response (Content-Length, chunked, or until close; only the head of an event stream), or the
// fact that the server closed without answering, or that nothing happened in time (a hang).
import net from "node:net";

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface Exchange {
  answer?: Answer;
  /** The server closed (or reset) the connection without a complete answer. */
  closedWithoutAnswer: boolean;
  /** Neither an answer nor a close within the time limit. */
  timedOut: boolean;
  /** Bytes received that did not parse as an HTTP/1.1 answer (an HTTP/2 GOAWAY, for instance). */
  unparsed?: Buffer;
  elapsedMs: number;
}

const INTERIM = /^HTTP\/1\.[01] 1\d\d[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/;

/** Drops interim answers (100 Continue) from the front of `buf`. */
function skipInterim(buf: Buffer): Buffer {
  for (;;) {
    const m = INTERIM.exec(buf.subarray(0, 4096).toString("latin1"));
    if (!m) return buf;
    buf = buf.subarray(m[0].length);
  }
}

/** Parses the first final (non-1xx) response from `buf`; undefined while incomplete. */
export function parseAnswer(buf: Buffer, headOnly: boolean, closed: boolean): Answer | undefined {
  buf = skipInterim(buf);
  const sep = buf.indexOf("\r\n\r\n");
  if (sep < 0) return undefined;
  const head = buf.subarray(0, sep).toString("latin1");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) return undefined;
  const status = Number(m[1]);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const colon = l.indexOf(":");
    if (colon > 0) headers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim();
  }
  const rest = buf.subarray(sep + 4);
  if (headOnly || status === 204 || status === 304 || (headers["content-type"] ?? "").startsWith("text/event-stream")) {
    return { status, headers, body: Buffer.alloc(0) };
  }
  if (headers["content-length"] !== undefined) {
    const n = Number(headers["content-length"]);
    return rest.length >= n ? { status, headers, body: Buffer.from(rest.subarray(0, n)) } : undefined;
  }
  if ((headers["transfer-encoding"] ?? "").toLowerCase().includes("chunked")) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf("\r\n", at);
      if (eol < 0) return undefined;
      const size = parseInt(rest.subarray(at, eol).toString("latin1"), 16);
      if (!Number.isFinite(size)) return { status, headers, body: Buffer.concat(chunks) };
      if (size === 0) return { status, headers, body: Buffer.concat(chunks) };
      if (rest.length < eol + 2 + size + 2) return undefined;
      chunks.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
  return closed ? { status, headers, body: Buffer.from(rest) } : undefined;
}

export function exchange(port: number, bytes: Buffer, opts: { halfClose: boolean; headOnly: boolean; timeoutMs: number }): Promise<Exchange> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (e: Omit<Exchange, "elapsedMs">) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...e, elapsedMs: performance.now() - started });
    };
    const timer = setTimeout(() => finish({ timedOut: true, closedWithoutAnswer: false, ...(buf.length ? { unparsed: buf } : {}) }), opts.timeoutMs);
    socket.on("connect", () => {
      socket.write(bytes, () => {
        if (opts.halfClose) socket.end();
      });
    });
    const check = (closed: boolean) => {
      const answer = parseAnswer(buf, opts.headOnly, closed);
      if (answer) finish({ answer, closedWithoutAnswer: false, timedOut: false });
      else if (closed) finish({ closedWithoutAnswer: true, timedOut: false, ...(buf.length ? { unparsed: buf } : {}) });
    };
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      check(false);
    });
    socket.on("error", () => check(true));
    socket.on("close", () => check(true));
  });
}
