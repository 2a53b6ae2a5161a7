// What every answer must be, whatever was sent: an answer in time (never a hang), never a 500,
// a documented status, and for every error the JSON envelope {error, code, details?} whose code
// matches the status. Pure, so it is unit-tested on hand-made answers.
import type { BytesCase, FuzzCase, HttpCase } from "./fuzz-case.js";
import type { Exchange } from "./raw-exchange.js";

/** The envelope codes and the status each one means (SPEC-NOTES; 417 is the Expect answer). */
export const CODE_STATUS: Readonly<Record<string, readonly number[]>> = {
  BAD_REQUEST: [400, 417],
  UNAUTHORIZED: [401],
  FORBIDDEN: [403],
  NOT_FOUND: [404],
  LEASE_HELD: [404],
  CONFLICT: [409],
  PRECONDITION_FAILED: [412],
  PAYLOAD_TOO_LARGE: [413],
  UNSUPPORTED_MEDIA_TYPE: [415],
  TOO_MANY_REQUESTS: [429],
  NOT_IMPLEMENTED: [501],
  DRAINING: [503],
  QUORUM_FAILED: [503],
  UNAVAILABLE: [503],
  INTERNAL: [500],
};

/**
 * Statuses any request may get whatever its operation documents (docs/design.md): malformed HTTP
 * 400, unknown route or wrong method 404, a body over its limit 413, an Expect other than
 * 100-continue 417, authentication first 401/403, a body that is not JSON 415.
 */
export const GENERIC_STATUSES: readonly number[] = [400, 401, 403, 404, 413, 415, 417];

export interface OracleContext {
  /** Documented statuses of the operation the case came from (undefined: none, or the route was mutated). */
  documented?: readonly number[];
  /** Every status documented anywhere (what a mutated route may legitimately land on). */
  allDocumented: readonly number[];
  /** The method of the operation the case came from: a method "mutation" to it changes nothing. */
  method?: string;
  /**
   * Error statuses whose documented body is not the envelope (the probes' 503 carries the probe's
   * own body), with that body's required properties.
   */
  bodies?: Readonly<Record<number, readonly string[]>>;
}

/** An error answer's body as a JSON object, with what is wrong with it as one (content type, JSON, shape). */
function jsonErrorBody(status: number, headers: Record<string, string>, body: Buffer): { problems: string[]; object?: Record<string, unknown> } {
  const problems: string[] = [];
  if (!(headers["content-type"] ?? "").startsWith("application/json")) problems.push(`error ${status} without a JSON content type (${headers["content-type"] ?? "none"})`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return { problems: [...problems, `error ${status} body is not JSON: ${JSON.stringify(body.toString("latin1").slice(0, 120))}`] };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { problems: [...problems, `error ${status} body is not an object`] };
  return { problems, object: parsed as Record<string, unknown> };
}

function documentedBodyProblems(status: number, headers: Record<string, string>, body: Buffer, required: readonly string[]): string[] {
  const { problems, object } = jsonErrorBody(status, headers, body);
  if (object === undefined) return problems;
  return [...problems, ...required.filter((name) => !(name in object)).map((name) => `error ${status} documented body without "${name}"`)];
}

function envelopeProblems(status: number, headers: Record<string, string>, body: Buffer): string[] {
  const { problems, object: env } = jsonErrorBody(status, headers, body);
  if (env === undefined) return problems;
  if (typeof env.error !== "string") problems.push(`error ${status} envelope without a string "error"`);
  if (typeof env.code !== "string" || !(env.code in CODE_STATUS)) problems.push(`error ${status} envelope with unknown code ${JSON.stringify(env.code)}`);
  else if (!CODE_STATUS[env.code]?.includes(status)) problems.push(`code ${env.code} does not match status ${status}`);
  if (env.details !== undefined && (typeof env.details !== "object" || env.details === null || Array.isArray(env.details))) problems.push(`error ${status} with details that are not an object`);
  return problems;
}

/**
 * What is wrong with an error answer's body. The operation's own documented body (a probe's 503)
 * is required for the operation itself. A path mutation may still land on the same route (a
 * trailing slash: `/readyz/` is `/readyz`; fuzz seed 21000 found a draining node's probe body
 * there), so it may answer with either that body or the envelope. Anything else: the envelope.
 */
function errorBodyProblems(c: HttpCase | BytesCase, status: number, headers: Record<string, string>, body: Buffer, sameOperation: boolean, ownBody: readonly string[] | undefined, methodChanged: boolean): string[] {
  if (ownBody === undefined) return envelopeProblems(status, headers, body);
  if (sameOperation) return documentedBodyProblems(status, headers, body, ownBody);
  const pathOnly = c.kind === "http" && !methodChanged;
  if (pathOnly && documentedBodyProblems(status, headers, body, ownBody).length === 0) return [];
  return envelopeProblems(status, headers, body);
}

/** The problems with one exchange; empty when the answer is acceptable. */
export function judge(c: HttpCase | BytesCase, x: Exchange, ctx: OracleContext): string[] {
  if (x.timedOut) return [`no answer and no close within ${Math.round(x.elapsedMs)} ms (hang)`];
  const halfClosed = c.kind === "bytes" || c.framing === "truncated";
  if (!x.answer) {
    // bytes that are not HTTP/1.1 (junk, an HTTP/2 preface) may be answered by closing; so may a
    // request whose body the client cut short. Anything else deserves an answer.
    return halfClosed ? [] : ["the connection closed without an answer"];
  }
  const { status, headers, body } = x.answer;
  const problems: string[] = [];
  if (status === 500) problems.push(`500 Internal Server Error: ${JSON.stringify(body.toString("latin1").slice(0, 200))}`);
  // Junk in the query string leaves the route as it was: its documented answers still apply; so
  // does a method "mutation" that drew the operation's own method.
  const methodChanged = c.kind === "http" && c.mutations.some((m) => m.startsWith("method:")) && (ctx.method === undefined || c.method !== ctx.method);
  const sameOperation = c.kind === "http" && ctx.documented !== undefined && !methodChanged && c.mutations.every((m) => !m.startsWith("path:") || m === "path:query-junk");
  const allowed = sameOperation && ctx.documented ? [...ctx.documented, ...GENERIC_STATUSES] : [...ctx.allDocumented, ...GENERIC_STATUSES];
  if (c.listener !== "dist" && !allowed.includes(status)) problems.push(`status ${status} is not documented for this request`);
  const isHead = c.kind === "http" && c.method === "HEAD";
  // The dist listener speaks Connect (its own error JSON); the envelope is a client/management promise.
  if (status >= 400 && !isHead && c.listener !== "dist") problems.push(...errorBodyProblems(c, status, headers, body, sameOperation, ctx.bodies?.[status], methodChanged));
  if (c.listener === "dist" && status > 500 && status !== 501 && status !== 503) problems.push(`dist listener answered ${status}`);
  return problems;
}

/**
 * A stable name for a kind of failure (the listener, the mutation and the first problem's class),
 * so a fuzz run can go on after finding one and look for others.
 */
export function failureSignature(c: FuzzCase, problems: readonly string[]): string {
  const first = problems[0] ?? "";
  const cls =
    /^500/.test(first) ? "500"
    : /hang/.test(first) ? "hang"
    : /closed without an answer/.test(first) ? "closed"
    : /exited/.test(first) ? "crash"
    : /^status (\d+) is not documented/.test(first) ? `undocumented-${/^status (\d+)/.exec(first)?.[1]}`
    : /^code .* does not match/.test(first) ? "code-mismatch"
    : /^error (\d+)/.test(first) ? `envelope-${/^error (\d+)/.exec(first)?.[1]}`
    : first.slice(0, 40);
  const kind = c.kind === "bytes" ? "bytes" : c.mutations[0] ?? "none";
  return `${c.listener}|${kind}|${cls}`;
}
