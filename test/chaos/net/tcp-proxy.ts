// A small TCP proxy that delays every chunk by a fixed time in each direction (a slow link; tc
// netem is not available here). Order is kept; a direction stops reading while more than
// MAX_QUEUED_BYTES wait, so a slow link is also a narrow one under load.
import net from "node:net";

const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export interface ProxyTarget {
  listenHost: string;
  listenPort: number;
  targetHost: string;
  targetPort: number;
}

/** Pipes `from` into `to`, each chunk released `delayMs` after it arrived. */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let queued = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as { at: number }).at <= now) {
      const { chunk } = queue.shift() as { chunk: Buffer };
      queued -= chunk.length;
      if (!to.destroyed) to.write(chunk);
    }
    if (queued <= MAX_QUEUED_BYTES && from.isPaused()) from.resume();
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, (queue[0] as { at: number }).at - now));
    else if (ended && !to.destroyed) to.end();
  };
  from.on("data", (chunk: Buffer) => {
    queue.push({ at: performance.now() + delayMs, chunk });
    queued += chunk.length;
    if (queued > MAX_QUEUED_BYTES) from.pause();
    timer ??= setTimeout(flush, delayMs);
  });
  from.on("end", () => {
    ended = true;
    timer ??= setTimeout(flush, delayMs);
  });
}

export class DelayProxy {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly delayMs: number) {}

  /** Starts one listener per target. */
  async listen(targets: readonly ProxyTarget[]): Promise<void> {
    for (const t of targets) {
      const server = net.createServer((client) => this.accept(client, t));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(t.listenPort, t.listenHost, () => resolve());
      });
      this.servers.push(server);
    }
  }

  private accept(client: net.Socket, t: ProxyTarget): void {
    const upstream = net.connect({ host: t.targetHost, port: t.targetPort });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      s.on("close", () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    delayedPipe(client, upstream, this.delayMs);
    delayedPipe(upstream, client, this.delayMs);
  }

  /** Stops listening and cuts every proxied connection (their ends reconnect directly). */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.servers.length = 0;
  }
}
