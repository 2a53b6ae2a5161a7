// Shared helpers of the multi-process cluster tests (cluster-membership, cluster-rebalance,
// cluster-churn): HTTP calls against real nodes, polling, an SSE client on node:http, and the
// short timer settings that keep each file well under a minute.
import type { LogRecord, NodeProcess } from "../helpers/node-process.js";
import { openEventStream, type SseFrame } from "./observability-helpers.js";

/** Short membership and data-movement timers (5x faster than the defaults). */
export const FAST_TIMERS: Readonly<Record<string, string>> = Object.freeze({
  SERVICE_HEARTBEAT: "200ms",
  SERVICE_DEAD_AFTER: "1200ms",
  SERVICE_GOSSIP_INTERVAL: "200ms",
  SERVICE_REBALANCE_INTERVAL: "100ms",
  SERVICE_HINT_REPLAY: "100ms",
});

export type MemberState = "alive" | "suspect" | "dead";

export interface MemberEntry {
  id: string;
  address: string;
  state: MemberState;
  incarnation: number;
  last_seen: string;
}

export interface MembersBody {
  node: string;
  replication: number;
  virtual_nodes: number;
  membership_version: number;
  members: MemberEntry[];
}

export type Metrics = Record<string, number>;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` until `ok` holds or `timeoutMs` passes, and returns the last value (the caller
 * asserts on it, so a timeout fails with the real last observation). Probe errors count as "not
 * yet" and are kept for the message.
 */
export async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000, intervalMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    let failed = false;
    try {
      value = await probe();
    } catch (err) {
      failed = true;
      if (Date.now() >= until) throw err;
    }
    if (!failed && (ok(value as T) || Date.now() >= until)) return value as T;
    await sleep(intervalMs);
  }
}

export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export const members = (n: NodeProcess) => getJson<MembersBody>(`${n.mgmt}/cluster/members`);
export const metrics = (n: NodeProcess) => getJson<Metrics>(`${n.mgmt}/dist/metrics`);
export const stats = (n: NodeProcess) => getJson<{ node: string; items: number }>(`${n.mgmt}/stats`);

/** `id`'s state in `body`, or undefined when it is not listed. */
export function stateOf(body: MembersBody, id: string): MemberState | undefined {
  return body.members.find((m) => m.id === id)?.state;
}

/** A compact "n1:alive@3 n2:suspect@4" view of a membership body, for messages. */
export function describeMembers(body: MembersBody): string {
  return `${body.node} v${body.membership_version} [${body.members.map((m) => `${m.id}:${m.state}@${m.incarnation}`).join(" ")}]`;
}

/** True when `body` lists exactly `ids`, every one alive. */
export function allAlive(body: MembersBody, ids: readonly string[]): boolean {
  return body.members.length === ids.length && ids.every((id) => stateOf(body, id) === "alive");
}

/** Waits until every node of `nodes` lists exactly `ids`, all alive; returns the last views. */
export async function waitAllAlive(nodes: readonly NodeProcess[], ids: readonly string[], timeoutMs = 10_000): Promise<MembersBody[]> {
  return eventually(
    () => Promise.all(nodes.map(members)),
    (views) => views.every((v) => allAlive(v, ids)),
    timeoutMs,
    50,
  );
}

export async function put(node: NodeProcess, key: string, body: Buffer | string, query = ""): Promise<{ status: number; text: string }> {
  const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}${query}`, { method: "PUT", body });
  return { status: res.status, text: await res.text() };
}

export async function getRaw(node: NodeProcess, key: string, query = ""): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${node.api}/v1/cache/${encodeURIComponent(key)}${query}`);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

export async function ownersOf(node: NodeProcess, key: string): Promise<string[]> {
  return (await getJson<{ owners: string[] }>(`${node.api}/v1/owners/${encodeURIComponent(key)}`)).owners;
}

export interface BatchPutItem {
  key: string;
  value: string;
  value_encoding?: "base64";
}

/** POST /v1/cache/batch/put; returns the per-item results (the call itself must answer 200). */
export async function batchPut(node: NodeProcess, items: readonly BatchPutItem[]): Promise<Array<{ key: string; status: number; error?: string }>> {
  const res = await fetch(`${node.api}/v1/cache/batch/put`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ items }) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`batch put on ${node.id}: ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { results: Array<{ key: string; status: number; error?: string }> }).results;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Index of the first record at or after `from` with `message` (and peer `peer` when given); -1 if none. */
export function logIndex(logs: readonly LogRecord[], message: string, peer?: string, from = 0): number {
  for (let i = from; i < logs.length; i++) {
    const r = logs[i] as LogRecord;
    if (r.message === message && (peer === undefined || r.peer === peer)) return i;
  }
  return -1;
}

/** Compact lines of the records that name `peer`, for assertion messages. */
export function peerRecords(logs: readonly LogRecord[], peer: string, from = 0): string[] {
  return logs.slice(from).filter((r) => r.peer === peer).map((r) => `${String(r.timestamp)} ${r.level} ${r.message}`);
}

// ---- Server-Sent Events ------------------------------------------------------------------------

export type { SseFrame } from "./observability-helpers.js";

export interface SseClient {
  readonly status: number;
  readonly contentType: string;
  /** `retry:` value of the stream, when one was sent. */
  readonly retry: () => number | undefined;
  readonly frames: SseFrame[];
  /** Waits for a frame at index >= `from` that satisfies `pred`; returns its index. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs: number, from?: number): Promise<number>;
  close(): void;
}

/** Opens GET /cluster/events of `node` (openEventStream) and names the node in its errors. */
export async function subscribeEvents(node: NodeProcess): Promise<SseClient> {
  const stream = await openEventStream(node.mgmtPort);
  return {
    status: stream.status,
    contentType: String(stream.headers["content-type"] ?? ""),
    retry: () => {
      const m = /^retry:\s*(\d+)$/m.exec(stream.text());
      return m ? Number(m[1]) : undefined;
    },
    frames: stream.frames,
    waitFor: (pred, timeoutMs, from) =>
      stream.waitFor(pred, timeoutMs, from).catch((err: unknown) => {
        throw new Error(`${node.id}: ${err instanceof Error ? err.message : String(err)}`);
      }),
    close: () => stream.close(),
  };
}

/** The members frames of `frames` with their index, parsed. */
export function membersFrames(frames: readonly SseFrame[]): Array<{ index: number; at: number; body: MembersBody }> {
  const out: Array<{ index: number; at: number; body: MembersBody }> = [];
  frames.forEach((f, index) => {
    if (f.event === "members") out.push({ index, at: f.at, body: JSON.parse(f.data) as MembersBody });
  });
  return out;
}
