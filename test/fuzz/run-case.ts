// Sends one case to the target and judges it: the oracle's verdict on the answer, plus the
// process: it must still be running afterwards.
import { LEASE_LIMITS } from "../../src/core/limits.js";
import { serialize, type FuzzCase } from "./fuzz-case.js";
import type { Operation } from "./openapi-model.js";
import { judge, type OracleContext } from "./oracle.js";
import { exchange } from "./raw-exchange.js";
import { sendStream } from "./h2-stream.js";
import { judgeStream } from "./stream-oracle.js";
import { TOKENS, type FuzzTarget } from "./target-node.js";

/**
 * Longer than any server-side wait a well-formed case can cause (a lease read may wait up to
 * LEASE_LIMITS.waitMsMax for a value: 10 s); bombs get more.
 */
export const ANSWER_TIMEOUT_MS = LEASE_LIMITS.waitMsMax + 5_000;

export interface CaseJudge {
  target: FuzzTarget;
  operations: ReadonlyMap<string, Operation>;
  allDocumented: readonly number[];
}

export interface CaseResult {
  problems: string[];
  /** The answer's status, if one came. */
  status?: number;
}

export async function runCase(j: CaseJudge, c: FuzzCase, timeoutMs = ANSWER_TIMEOUT_MS): Promise<CaseResult> {
  await j.target.ensureUp();
  const port = j.target.port(c.listener);
  if (c.kind === "h2") {
    const problems = judgeStream(c, await sendStream(port, c, `Bearer ${TOKENS.peer}`, timeoutMs));
    return { problems: await withProcess(j, problems) };
  }
  const sent =
    c.kind === "bytes"
      ? { bytes: Buffer.from(c.bytes, "base64"), halfClose: true }
      : serialize(c, `127.0.0.1:${port}`);
  const x = await exchange(port, sent.bytes, { halfClose: sent.halfClose, headOnly: c.kind === "http" && c.method === "HEAD", timeoutMs });
  const op = c.kind === "http" && c.operation ? j.operations.get(c.operation) : undefined;
  const ctx: OracleContext = { allDocumented: j.allDocumented, ...(op ? { documented: op.statuses, bodies: op.bodies, method: op.method } : {}) };
  const problems = await withProcess(j, judge(c, x, ctx));
  return { problems, ...(x.answer ? { status: x.answer.status } : {}) };
}

/** How long a case with a problem waits to see whether the node is exiting. */
const EXIT_GRACE_MS = 200;

/**
 * `problems`, and one more when the node is no longer running. A case with a problem (a closed
 * connection, a failed session) may be the node dying: it waits a little for the exit to show,
 * so the crash is put on the case that caused it, not on the next one. Cases without a problem
 * only give an asynchronous crash a tick.
 */
async function withProcess(j: CaseJudge, problems: string[]): Promise<string[]> {
  if (problems.length > 0) await Promise.race([j.target.node.exited, new Promise((r) => setTimeout(r, EXIT_GRACE_MS))]);
  else await new Promise((r) => setImmediate(r));
  if (!j.target.alive) problems.push(`the node exited (${j.target.node.child.exitCode ?? j.target.node.child.signalCode}): ${j.target.lastWords()}`);
  return problems;
}
