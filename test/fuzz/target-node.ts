// The process under fuzzing: one real hypercache-server on loopback with a policy file (a
// read-write, a read-only and an admin token), a peer token, and canary keys whose values must
// survive the run. Restarted on the same ports when a case kills it, so shrinking can go on.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePorts } from "../helpers/ports.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { CANARY_PREFIX, type Tokens } from "./case-arbitraries.js";

export const TOKENS: Tokens = {
  readWrite: "fuzz-read-write-token-0123456789",
  readOnly: "fuzz-read-only-token-0123456789a",
  admin: "fuzz-admin-token-0123456789abcdef",
  peer: "fuzz-peer-token-0123456789abcdefg",
};

const CANARIES = 20;

function policyFile(dir: string): string {
  const file = path.join(dir, "auth.yaml");
  writeFileSync(
    file,
    [
      "tokens:",
      `  - {id: fuzz-rw, token: ${TOKENS.readWrite}, scopes: [read, write]}`,
      `  - {id: fuzz-ro, token: ${TOKENS.readOnly}, scopes: [read]}`,
      `  - {id: fuzz-admin, token: ${TOKENS.admin}, scopes: [read, write, admin]}`,
      "allow_anonymous: false",
      "",
    ].join("\n"),
  );
  return file;
}

export class FuzzTarget {
  node!: NodeProcess;
  restarts = 0;
  private readonly canaries = new Map<string, string>();

  private constructor(
    private readonly ports: { api: number; mgmt: number; dist: number },
    private readonly env: Record<string, string>,
    private readonly dir: string,
  ) {}

  static async start(): Promise<FuzzTarget> {
    const [api, mgmt, dist] = (await freePorts(3)) as [number, number, number];
    const dir = mkdtempSync(path.join(os.tmpdir(), "hypercache-fuzz-"));
    const t = new FuzzTarget({ api, mgmt, dist }, { SERVICE_AUTH_CONFIG: policyFile(dir), SERVICE_PEER_TOKEN: TOKENS.peer }, dir);
    await t.boot();
    return t;
  }

  private async boot(): Promise<void> {
    this.node = await startNode({ id: "fuzz1", ports: this.ports, env: this.env });
  }

  port(listener: "client" | "mgmt" | "dist"): number {
    return listener === "client" ? this.ports.api : listener === "mgmt" ? this.ports.mgmt : this.ports.dist;
  }

  get alive(): boolean {
    return this.node.child.exitCode === null && this.node.child.signalCode === null;
  }

  /** Restarts the node when a case killed it (canaries are written again: the node starts empty). */
  async ensureUp(): Promise<void> {
    if (this.alive) return;
    this.restarts++;
    await this.boot();
    for (const [k, v] of this.canaries) await this.put(k, v);
  }

  /** RSS of the node process in bytes, from /proc. */
  rssBytes(): number {
    const status = readFileSync(`/proc/${this.node.child.pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return kb * 1024;
  }

  private async put(key: string, value: string): Promise<void> {
    const res = await fetch(`${this.node.api}/v1/cache/${encodeURIComponent(key)}`, { method: "PUT", body: value, headers: { authorization: `Bearer ${TOKENS.readWrite}` } });
    if (res.status !== 200) throw new Error(`canary ${key}: PUT answered ${res.status}`);
  }

  async writeCanaries(): Promise<void> {
    for (let i = 0; i < CANARIES; i++) {
      const key = `${CANARY_PREFIX}${i}`;
      const value = `canary value ${i} ${"x".repeat(i * 10)}`;
      this.canaries.set(key, value);
      await this.put(key, value);
    }
  }

  /** The canaries whose value changed or vanished. */
  async changedCanaries(): Promise<string[]> {
    const changed: string[] = [];
    for (const [key, value] of this.canaries) {
      const res = await fetch(`${this.node.api}/v1/cache/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${TOKENS.readWrite}` } });
      const got = res.status === 200 ? await res.text() : `status ${res.status}`;
      if (got !== value) changed.push(`${key}: ${got.slice(0, 60)}`);
    }
    return changed;
  }

  /** Items and value bytes the node holds (management /stats). */
  async stats(): Promise<{ items: number; bytes: number }> {
    const res = await fetch(`${this.node.mgmt}/stats`, { headers: { authorization: `Bearer ${TOKENS.readOnly}` } });
    const body = (await res.json()) as { items: number; bytes: number };
    return { items: body.items, bytes: body.bytes };
  }

  /** undefined when GET /healthz answers 200 within the time limit, else what went wrong. */
  async healthz(timeoutMs = 2_000): Promise<string | undefined> {
    try {
      const res = await fetch(`${this.node.api}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
      return res.status === 200 ? undefined : `healthz answered ${res.status}`;
    } catch (err) {
      return `healthz: ${(err as Error).message}`;
    }
  }

  /** Log records at level error (a 500's cause, an uncaught failure) and stderr output so far. */
  errorLogs(): string[] {
    return [...this.node.logs.filter((r) => r.level === "error").map((r) => JSON.stringify(r)), ...this.node.stderr];
  }

  /** What the node wrote last (its stderr, else its last error record): why it exited. */
  lastWords(): string {
    const stderr = this.node.stderr.join("").trim();
    if (stderr !== "") return stderr.slice(-600);
    const errors = this.node.logs.filter((r) => r.level === "error");
    return errors.length > 0 ? JSON.stringify(errors[errors.length - 1]).slice(0, 600) : "nothing on stderr, no error record";
  }

  /** Stops the node and removes the policy file's folder. */
  async stop(): Promise<void> {
    if (this.alive) await this.node.stop("SIGTERM");
    rmSync(this.dir, { recursive: true, force: true });
  }
}
