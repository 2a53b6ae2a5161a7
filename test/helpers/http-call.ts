// One HTTP or HTTPS request on a fresh connection, with exact control over method, headers,
// body and the client's TLS material. TLS handshake failures reject.
import http from "node:http";
import https from "node:https";

export interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  /** The body parsed as JSON. */
  json<T = Record<string, unknown>>(): T;
}

export interface CallOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** For https: URLs. `ca` verifies the server; `cert`/`key` are the client certificate. */
  readonly tls?: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** Resolve as soon as the status and headers arrive, then drop the connection (streams). */
  readonly headersOnly?: boolean;
  /** The client's source address (another loopback address, 127.0.0.x, to play another client). */
  readonly localAddress?: string;
}

export function call(url: string, opts: CallOptions = {}): Promise<Reply> {
  const u = new URL(url);
  const secure = u.protocol === "https:";
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      host: u.hostname,
      port: u.port,
      path: `${u.pathname}${u.search}`,
      method: opts.method ?? "GET",
      headers: opts.headers,
      agent: false,
      localAddress: opts.localAddress,
      ...(secure ? { ca: opts.tls?.ca, cert: opts.tls?.cert, key: opts.tls?.key } : {}),
    };
    const req = (secure ? https : http).request(options, (res) => {
      if (opts.headersOnly) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0), json: () => ({}) as never });
        req.destroy();
        return;
      }
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        const body = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body.toString("utf8")) as T });
      });
      res.on("error", reject);
    });
    req.on("error", (err) => {
      if (!opts.headersOnly || !req.destroyed) reject(err);
    });
    req.end(opts.body);
  });
}

/** `Authorization: Bearer <token>`. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** `Authorization: Basic <base64(user:password)>`. */
export const basic = (user: string, password: string): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`,
});
