// The dist listener: one port serving the peer service over HTTP/1.1 and cleartext HTTP/2.
// `http2.createServer({ allowHTTP1 })` only mixes protocols under TLS (ALPN), so a net server
// looks at the first bytes of each connection: the HTTP/2 preface ("PRI * HTTP/2.0") goes to
// the HTTP/2 server, anything else to the HTTP/1.1 server. Open sockets are tracked so that
// close() really closes.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { connectNodeAdapter } from "@connectrpc/connect-node";

type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;
import { PEER_IDLE_TIMEOUT_MS, PEER_TIMEOUT_MS } from "../core/limits.js";
import { rewriteFixedPath } from "./fixed-paths.js";

const PREFACE_START = Buffer.from("PRI ");

export interface PeerServer {
  /** The server to `listen()` on. */
  readonly server: net.Server;
  /** Stops accepting, then closes every open connection. */
  close(): Promise<void>;
}

export function createPeerServer(connectHandler: NodeHandlerFn): PeerServer {
  const handle = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    rewriteFixedPath(req);
    connectHandler(req, res);
  };
  const h1 = http.createServer({ requestTimeout: PEER_TIMEOUT_MS, headersTimeout: PEER_TIMEOUT_MS, keepAliveTimeout: PEER_IDLE_TIMEOUT_MS }, handle);
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: 1000 } }, handle);
  h2.setTimeout(PEER_IDLE_TIMEOUT_MS, (session?: unknown) => (session as http2.Http2Session | undefined)?.close?.());
  const sockets = new Set<net.Socket>();

  const server = net.createServer({ pauseOnConnect: false }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      if (seen.length < PREFACE_START.length && PREFACE_START.subarray(0, seen.length).equals(seen)) return;
      socket.off("data", onData);
      socket.pause();
      socket.unshift(seen);
      const isH2 = seen.subarray(0, PREFACE_START.length).equals(PREFACE_START);
      (isH2 ? h2 : h1).emit("connection", socket);
      socket.resume();
    };
    socket.on("data", onData);
  });

  return {
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        h1.close();
        h2.close();
        for (const s of sockets) s.destroy();
      }),
  };
}
