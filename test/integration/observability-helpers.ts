// Shared helpers of the management, lifecycle and event-stream tests (and the OpenTelemetry unit
// test): an SSE client on node:http that keeps the raw text and timestamps every frame, a small
// parser of the Prometheus text exposition format, and a tiny OTLP/HTTP collector on 127.0.0.1.
import http from "node:http";
import type net from "node:net";
import { Waiters } from "../helpers/waiters.js";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Server-Sent Events

export interface SseFrame {
  /** The `event:` field ("message" when absent). */
  readonly event: string;
  /** The `data:` lines joined with "\n". */
  readonly data: string;
  /** The frame as sent, without the blank line that ends it. */
  readonly raw: string;
  /** When the client parsed it (Date.now()). */
  readonly at: number;
}

export interface SseStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Everything received so far, as text. */
  text(): string;
  /** Frames carrying data, in arrival order (the `retry:` block is not a frame). */
  readonly frames: SseFrame[];
  /** Waits until `pred` holds for a frame at index >= `from`; returns that index. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs: number, from?: number): Promise<number>;
  close(): void;
}

/** Parses one SSE block (lines up to a blank line) into its event name and data. */
export function parseSseBlock(block: string): { event: string; data: string[]; retry: number | undefined } {
  let event = "message";
  let retry: number | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).replace(/^ /, "");
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    else if (line.startsWith("retry:")) retry = Number(line.slice(6).trim());
  }
  return { event, data, retry };
}

/** Opens GET `path` on 127.0.0.1:`port` and parses frames as they arrive. */
export function openEventStream(port: number, path = "/cluster/events"): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const frames: SseFrame[] = [];
    const waiters = new Waiters();
    let all = "";
    let pending = "";
    const req = http.get({ host: "127.0.0.1", port, path, headers: { Accept: "text/event-stream" }, agent: false }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        all += chunk;
        pending += chunk;
        let sep: number;
        while ((sep = pending.indexOf("\n\n")) >= 0) {
          const block = pending.slice(0, sep);
          pending = pending.slice(sep + 2);
          const parsed = parseSseBlock(block);
          if (parsed.data.length > 0) frames.push({ event: parsed.event, data: parsed.data.join("\n"), raw: block, at: Date.now() });
        }
        waiters.notify();
      });
      res.on("error", () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => all,
        frames,
        waitFor: (pred, timeoutMs, from = 0) =>
          waiters.until<number>(
            () => {
              const i = frames.findIndex((f, index) => index >= from && pred(f));
              return i >= 0 ? { ok: i } : undefined;
            },
            timeoutMs,
            () => `no matching SSE frame within ${timeoutMs} ms; frames so far: ${frames.map((f) => f.event).join(",")}`,
          ),
        close() {
          req.destroy();
        },
      });
    });
    req.on("error", (err) => {
      if (frames.length === 0 && all === "") reject(err);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Prometheus text exposition format

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PromFamily {
  help?: string;
  type?: string;
}

export interface PromText {
  /** # HELP and # TYPE by metric family name. */
  readonly families: ReadonlyMap<string, PromFamily>;
  readonly samples: readonly PromSample[];
  /** The value of the unlabelled sample `name`, or undefined. */
  value(name: string): number | undefined;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

/** Parses a sample value: a float, or NaN, +Inf, -Inf as the format spells them. */
function parseValue(raw: string, line: string): number {
  if (raw === "NaN") return NaN;
  if (raw === "+Inf" || raw === "Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`sample value ${JSON.stringify(raw)} is not a number in line ${JSON.stringify(line)}`);
  return Number(raw);
}

/** Parses `{a="x",b="y\"z"}` starting at `text[0] === "{"`; returns the labels and the rest. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`label without "=" in ${JSON.stringify(line)}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in ${JSON.stringify(line)}`);
    if (text[eq + 1] !== '"') throw new Error(`label value not quoted in ${JSON.stringify(line)}`);
    let j = eq + 2;
    let value = "";
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        value += next === "n" ? "\n" : (next as string);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new Error(`expected "," or "}" after a label in ${JSON.stringify(line)}`);
  }
}

/**
 * Parses the Prometheus text format (version 0.0.4): `# HELP name text`, `# TYPE name type`,
 * other comments, blank lines and samples `name{labels} value [timestamp]`. Throws on any line
 * it cannot parse, so a successful parse means the exposition is well formed.
 */
export function parsePrometheus(text: string): PromText {
  const families = new Map<string, PromFamily>();
  const samples: PromSample[] = [];
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = {}));
    return f;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest = ""] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in ${JSON.stringify(line)}`);
      if (kind === "HELP") family(name).help = rest;
      else {
        if (!TYPES.has(rest.trim())) throw new Error(`unknown metric type in ${JSON.stringify(line)}`);
        if (family(name).type !== undefined) throw new Error(`second # TYPE for ${name}`);
        family(name).type = rest.trim();
      }
      continue;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) throw new Error(`sample line without a metric name: ${JSON.stringify(line)}`);
    const name = nameMatch[0];
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || parts[0] === "") throw new Error(`sample line without a value: ${JSON.stringify(line)}`);
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1] as string)) throw new Error(`bad timestamp in ${JSON.stringify(line)}`);
    samples.push({ name, labels, value: parseValue(parts[0] as string, line) });
  }
  return {
    families,
    samples,
    value: (name) => samples.find((s) => s.name === name && Object.keys(s.labels).length === 0)?.value,
  };
}

// ---------------------------------------------------------------------------------------------
// OTLP/HTTP collector

export interface CollectedPost {
  readonly method: string;
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
  readonly at: number;
}

export interface Collector {
  readonly port: number;
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly posts: CollectedPost[];
  /** Waits until `n` requests to `path` have arrived; returns them. */
  waitForPosts(path: string, n: number, timeoutMs: number): Promise<CollectedPost[]>;
  close(): Promise<void>;
}

/** A collector that records every request and answers 200 with an empty JSON body. */
export function startCollector(): Promise<Collector> {
  return new Promise((resolve, reject) => {
    const posts: CollectedPost[] = [];
    const waiters = new Waiters();
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        posts.push({ method: req.method ?? "", path: (req.url ?? "").split("?")[0] as string, contentType: String(req.headers["content-type"] ?? ""), body: Buffer.concat(parts), at: Date.now() });
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end("{}");
        waiters.notify();
      });
    });
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        port,
        endpoint: `http://127.0.0.1:${port}`,
        posts,
        waitForPosts(path, n, timeoutMs) {
          const matching = () => posts.filter((p) => p.path === path);
          return waiters.until<CollectedPost[]>(
            () => (matching().length >= n ? { ok: matching() } : undefined),
            timeoutMs,
            () => `${matching().length} of ${n} requests to ${path} within ${timeoutMs} ms; all requests: ${JSON.stringify(posts.map((p) => `${p.method} ${p.path}`))}`,
          );
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
