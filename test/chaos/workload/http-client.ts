// HTTP/1.1 requests from the driver to the nodes, with keep-alive, a timeout, and the one fact the
// history needs about a failure: whether the request may have reached the server. A request that
// never got a connection (refused, unreachable, connect timeout) was certainly not applied; one
// that was written to a connection may have been.
import http from "node:http";
import { assertTarget } from "../net/addresses.js";

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export class RequestError extends Error {
  constructor(
    message: string,
    /** True when the request was written to a connection (its effect is unknown). */
    readonly sent: boolean,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface RequestSpec {
  host: string;
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  timeoutMs: number;
}

export class HttpClient {
  private readonly agent: http.Agent;

  constructor(private readonly mode: "netns" | "loopback", maxSocketsPerHost = 32) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: maxSocketsPerHost, keepAliveMsecs: 1000 });
  }

  request(spec: RequestSpec): Promise<HttpAnswer> {
    assertTarget(spec.host, this.mode);
    return new Promise((resolve, reject) => {
      let sent = false;
      let settled = false;
      const finish = (err: RequestError | undefined, answer?: HttpAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(answer as HttpAnswer);
      };
      const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
      const headers: Record<string, string> = { ...spec.headers };
      if (body) headers["content-length"] = String(body.length);
      const req = http.request({ host: spec.host, port: spec.port, method: spec.method, path: spec.path, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", (e: NodeJS.ErrnoException) => finish(new RequestError(e.message, true, e.code ?? "RESPONSE_ERROR")));
      });
      req.on("socket", (socket) => {
        // A reused keep-alive socket is already connected: the request goes out at once.
        if (!socket.connecting) sent = true;
        else socket.once("connect", () => (sent = true));
      });
      req.on("error", (e: NodeJS.ErrnoException) => finish(new RequestError(e.message, sent, e.code ?? "REQUEST_ERROR")));
      const timer = setTimeout(() => {
        finish(new RequestError(`timeout after ${spec.timeoutMs} ms`, sent, "TIMEOUT"));
        req.destroy();
      }, spec.timeoutMs);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
