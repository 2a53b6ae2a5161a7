// HTTP/1.1 over a plain TCP socket, byte for byte: for requests node:http will not send (CONNECT
// without a proxy, a head that never ends, a body that does not match its Content-Length) and to
// see exactly when the server answers and when it closes the connection. Responses are framed by
// Content-Length (1xx, 204 and 304 answers have no body; HEAD answers are read with `headOnly`).
import net from "node:net";

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  json<T = Record<string, unknown>>(): T;
}

export class RawConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;
  /** Milliseconds since the epoch when the connection was made. */
  readonly connectedAt: Promise<number>;
  /** Resolves when the socket has closed (by either side), with the time it closed. */
  readonly closed: Promise<number>;

  private constructor(readonly socket: net.Socket) {
    this.connectedAt = new Promise((resolve, reject) => {
      socket.once("connect", () => resolve(Date.now()));
      socket.once("error", reject);
    });
    this.closed = new Promise((resolve) => socket.once("close", () => resolve(Date.now())));
    socket.on("data", (d: Buffer) => {
      this.buffered = this.buffered.length === 0 ? d : Buffer.concat([this.buffered, d]);
      this.wake?.();
    });
    socket.on("end", () => {
      this.ended = true;
      this.wake?.();
    });
    socket.on("error", (err) => {
      this.failure = err;
      this.wake?.();
    });
    socket.on("close", () => {
      this.ended = true;
      this.wake?.();
    });
  }

  /** Opens a connection to 127.0.0.1:`port` and waits until it is established. */
  static async open(port: number): Promise<RawConnection> {
    const c = new RawConnection(net.connect(port, "127.0.0.1"));
    await c.connectedAt;
    return c;
  }

  /** True once the server has ended or closed the connection. */
  get endedByPeer(): boolean {
    return this.ended;
  }

  /** Bytes received and not yet read as a response. */
  get pending(): Buffer {
    return this.buffered;
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  /** Reads the next response (a 1xx included); rejects if the connection ends before it is complete. */
  async read(opts: { headOnly?: boolean; timeoutMs?: number } = {}): Promise<RawResponse> {
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
    for (;;) {
      const r = this.parse(opts.headOnly ?? false);
      if (r) return r;
      if (this.ended || this.failure) {
        throw new Error(`the connection ended before a complete response (${this.failure?.message ?? "closed"}); received ${JSON.stringify(this.buffered.toString("latin1").slice(0, 300))}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no complete response within ${opts.timeoutMs ?? 10_000} ms; received ${JSON.stringify(this.buffered.toString("latin1").slice(0, 300))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve();
        };
      });
    }
  }

  /** Waits for the socket to close; rejects after `timeoutMs`. Resolves with the close time. */
  waitClosed(timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not close the connection within ${timeoutMs} ms`)), timeoutMs);
      void this.closed.then((at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private parse(headOnly: boolean): RawResponse | undefined {
    const sep = this.buffered.indexOf("\r\n\r\n");
    if (sep < 0) return undefined;
    const head = this.buffered.subarray(0, sep).toString("latin1");
    const [statusLine = "", ...lines] = head.split("\r\n");
    const status = Number(statusLine.split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const colon = l.indexOf(":");
      headers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim();
    }
    const noBody = headOnly || (status >= 100 && status < 200) || status === 204 || status === 304;
    const length = noBody ? 0 : Number(headers["content-length"] ?? NaN);
    if (!Number.isInteger(length)) throw new Error(`response without Content-Length: ${JSON.stringify(head)}`);
    if (this.buffered.length < sep + 4 + length) return undefined;
    const body = Buffer.from(this.buffered.subarray(sep + 4, sep + 4 + length));
    this.buffered = this.buffered.subarray(sep + 4 + length);
    return { status, headers, body, json: <T>() => JSON.parse(body.toString("utf8")) as T };
  }
}
