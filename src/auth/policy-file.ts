// The auth policy file (SERVICE_AUTH_CONFIG): YAML or JSON (JSON is read as YAML 1.2, of which it
// is a subset), validated strictly at boot. Every problem is a PolicyFileError naming the file
// and the offending entry, so that a typo never silently turns into an open or locked-out API.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { BEARER_TOKEN_RULE, isBearerToken } from "../core/bearer-token.js";
import { POLICY_FILE_BYTES_MAX } from "./auth-limits.js";
import { ANONYMOUS_ID, SCOPES, isScope, type RateLimitOverride, type Scope } from "./identity.js";

/** A static bearer token of the policy file. */
export interface PolicyToken {
  readonly id: string;
  readonly token: string;
  readonly scopes: readonly Scope[];
  /** The entry's own rate limit (`rate_limit`, `rate_burst`). */
  readonly rateLimit?: RateLimitOverride;
}

/** A client-certificate identity, matched on the verified subject CN. */
export interface PolicyCertIdentity {
  readonly subjectCn: string;
  readonly scopes: readonly Scope[];
  /** The entry's own rate limit (`rate_limit`, `rate_burst`). */
  readonly rateLimit?: RateLimitOverride;
}

/** An HTTP Basic user with a bcrypt password hash. */
export interface PolicyUser {
  readonly username: string;
  readonly passwordHash: string;
  readonly scopes: readonly Scope[];
  /** The entry's own rate limit (`rate_limit`, `rate_burst`). */
  readonly rateLimit?: RateLimitOverride;
}

export interface Policy {
  readonly tokens: readonly PolicyToken[];
  readonly certIdentities: readonly PolicyCertIdentity[];
  readonly users: readonly PolicyUser[];
  /** Requests carrying no credential get the `anonymous` identity with every scope. Default false. */
  readonly allowAnonymous: boolean;
  /** Basic is accepted over plaintext HTTP (development only). Default false. */
  readonly allowBasicWithoutTls: boolean;
}

/** The policy file is missing, unreadable or invalid; server.ts exits with code 2. */
export class PolicyFileError extends Error {
  override readonly name = "PolicyFileError";
}

const TOP_KEYS = ["tokens", "cert_identities", "users", "allow_anonymous", "allow_basic_without_tls"];
/** A bcrypt hash as bcryptjs and the other common implementations write it. */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/** Reads and validates the policy file at `path`. */
export function loadPolicyFile(path: string, readFile: (p: string) => Buffer = readFileSync): Policy {
  let bytes: Buffer;
  try {
    bytes = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PolicyFileError(`cannot read the auth policy file ${path}: ${code === "ENOENT" ? "no such file" : String(err)}`);
  }
  if (bytes.length > POLICY_FILE_BYTES_MAX) {
    throw new PolicyFileError(`auth policy file ${path}: larger than ${POLICY_FILE_BYTES_MAX} bytes`);
  }
  return parsePolicy(bytes.toString("utf8"), path);
}

/** Parses and validates policy text (YAML or JSON); `source` names it in errors. */
export function parsePolicy(text: string, source: string): Policy {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100, prettyErrors: true });
  } catch (err) {
    const detail = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw new PolicyFileError(`auth policy file ${source}: not valid YAML or JSON: ${detail}`);
  }
  const fail = (where: string, message: string): never => {
    throw new PolicyFileError(`auth policy file ${source}: ${where}${where ? ": " : ""}${message}`);
  };
  if (doc === null || doc === undefined) return fail("", "the file is empty; give at least one of " + TOP_KEYS.join(", "));
  const top = record(doc, "", fail);
  checkKeys(top, TOP_KEYS, "", fail);
  const policy: Policy = {
    tokens: list(top.tokens, "tokens", fail).map((e, i) => token(e, `tokens[${i}]`, fail)),
    certIdentities: list(top.cert_identities, "cert_identities", fail).map((e, i) => certIdentity(e, `cert_identities[${i}]`, fail)),
    users: users(top.users, fail),
    allowAnonymous: flag(top.allow_anonymous, "allow_anonymous", fail),
    allowBasicWithoutTls: flag(top.allow_basic_without_tls, "allow_basic_without_tls", fail),
  };
  unique(policy.tokens.map((t) => t.id), "tokens", "id", fail);
  unique(policy.tokens.map((t) => t.token), "tokens", "token", fail, true);
  unique(policy.certIdentities.map((c) => c.subjectCn), "cert_identities", "subject_cn", fail);
  unique(policy.users.map((u) => u.username), "users", "username", fail);
  distinctIds(policy, fail);
  return Object.freeze(policy);
}

/**
 * One id per identity across tokens, users and cert_identities, and never the anonymous id: two
 * entries with one id would look the same in /v1/me and in the logs, and "anonymous" is kept for
 * requests without a credential (rate limited per address).
 */
function distinctIds(policy: Policy, fail: Fail): void {
  const owner = new Map<string, string>();
  const entries = [
    ...policy.tokens.map((t, i) => [t.id, `tokens[${i}].id`] as const),
    ...policy.users.map((u, i) => [u.username, `users[${i}].username`] as const),
    ...policy.certIdentities.map((c, i) => [c.subjectCn, `cert_identities[${i}].subject_cn`] as const),
  ];
  for (const [id, where] of entries) {
    if (id === ANONYMOUS_ID) fail(where, `${JSON.stringify(id)} is reserved for requests without a credential`);
    const first = owner.get(id);
    if (first !== undefined) fail(where, `id ${JSON.stringify(id)} is already used by ${first}; each identity needs its own id`);
    owner.set(id, where);
  }
}

/**
 * Refuses a policy that grants nothing: no token, user or certificate identity, and anonymous
 * access off. Such a file (`{}`, `tokens: []`) would boot a node nobody can use, the lock-out a
 * typo must never cause. Not checked when OIDC is configured: OIDC tokens are then the grant.
 */
export function requireSomeGrant(policy: Policy, source: string): void {
  if (policy.tokens.length + policy.users.length + policy.certIdentities.length > 0 || policy.allowAnonymous) return;
  throw new PolicyFileError(
    `auth policy file ${source}: grants no identity (no tokens, users or cert_identities, and allow_anonymous is not true), so nobody could use the API; give at least one, or set SERVICE_OIDC_ISSUER`,
  );
}

type Fail = (where: string, message: string) => never;
type Fields = Record<string, unknown>;

function record(v: unknown, where: string, fail: Fail): Fields {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return fail(where, `expected a mapping, got ${kind(v)}`);
  return v as Fields;
}

function list(v: unknown, where: string, fail: Fail): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return fail(where, `expected a list, got ${kind(v)}`);
  return v;
}

function checkKeys(v: Fields, allowed: readonly string[], where: string, fail: Fail): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) fail(where, `unknown key ${JSON.stringify(k)} (expected ${allowed.join(", ")})`);
  }
}

function text(v: unknown, where: string, fail: Fail): string {
  if (typeof v !== "string" || v === "") return fail(where, `expected a non-empty string, got ${kind(v)}`);
  return v;
}

function flag(v: unknown, where: string, fail: Fail): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") return fail(where, `expected true or false, got ${kind(v)}`);
  return v;
}

function scopes(v: unknown, where: string, fail: Fail): Scope[] {
  if (v === undefined || v === null) return fail(where, `is required: a list of ${SCOPES.join(", ")}`);
  return list(v, where, fail).map((s, i) => {
    if (!isScope(s)) return fail(`${where}[${i}]`, `unknown scope ${JSON.stringify(s)} (expected ${SCOPES.join(", ")})`);
    return s;
  });
}

function token(v: unknown, where: string, fail: Fail): PolicyToken {
  const e = record(v, where, fail);
  checkKeys(e, ["id", "token", "scopes", ...RATE_KEYS], where, fail);
  const value = text(e.token, `${where}.token`, fail);
  if (!isBearerToken(value)) fail(`${where}.token`, BEARER_TOKEN_RULE);
  return Object.freeze({ id: text(e.id, `${where}.id`, fail), token: value, scopes: Object.freeze(scopes(e.scopes, `${where}.scopes`, fail)), ...rateLimit(e, where, fail) });
}

function certIdentity(v: unknown, where: string, fail: Fail): PolicyCertIdentity {
  const e = record(v, where, fail);
  checkKeys(e, ["subject_cn", "scopes", ...RATE_KEYS], where, fail);
  return Object.freeze({ subjectCn: text(e.subject_cn, `${where}.subject_cn`, fail), scopes: Object.freeze(scopes(e.scopes, `${where}.scopes`, fail)), ...rateLimit(e, where, fail) });
}

/** Users as a list `[{username, password_hash, scopes}]` or a map `{name: {password_hash, scopes}}`. */
function users(v: unknown, fail: Fail): PolicyUser[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) {
    return v.map((raw, i) => {
      const where = `users[${i}]`;
      const e = record(raw, where, fail);
      checkKeys(e, ["username", "password_hash", "scopes", ...RATE_KEYS], where, fail);
      return user(text(e.username, `${where}.username`, fail), e, where, fail);
    });
  }
  const map = record(v, "users", fail);
  return Object.entries(map).map(([name, raw]) => {
    const where = `users.${name}`;
    const e = record(raw, where, fail);
    checkKeys(e, ["password_hash", "scopes", ...RATE_KEYS], where, fail);
    return user(name, e, where, fail);
  });
}

function user(username: string, e: Fields, where: string, fail: Fail): PolicyUser {
  if (username.includes(":") || CONTROL.test(username)) fail(`${where}.username`, "must not contain a colon or control characters (RFC 7617)");
  const hash = text(e.password_hash, `${where}.password_hash`, fail);
  if (!BCRYPT_HASH.test(hash)) fail(`${where}.password_hash`, "is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 53 characters)");
  return Object.freeze({ username, passwordHash: hash, scopes: Object.freeze(scopes(e.scopes, `${where}.scopes`, fail)), ...rateLimit(e, where, fail) });
}

/** The rate-limit keys every identity entry may carry. */
const RATE_KEYS = ["rate_limit", "rate_burst"];

/**
 * An entry's own rate limit: `rate_limit` requests per second (0: unlimited for this identity)
 * and optionally `rate_burst` (at least 1; default twice the rate). Absent: the node-wide limit.
 */
function rateLimit(e: Fields, where: string, fail: Fail): { rateLimit?: RateLimitOverride } {
  if (e.rate_limit === undefined || e.rate_limit === null) {
    if (e.rate_burst !== undefined && e.rate_burst !== null) fail(`${where}.rate_burst`, "needs rate_limit");
    return {};
  }
  const rate = e.rate_limit;
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate < 0 || rate > 1e9) return fail(`${where}.rate_limit`, `expected requests per second, a number from 0 to 1e9, got ${typeof rate === "number" ? rate : kind(rate)}`);
  const burst = e.rate_burst;
  if (burst === undefined || burst === null) return { rateLimit: Object.freeze({ ratePerS: rate }) };
  if (typeof burst !== "number" || !Number.isFinite(burst) || burst < 1 || burst > 1e9) return fail(`${where}.rate_burst`, `expected a number from 1 to 1e9, got ${typeof burst === "number" ? burst : kind(burst)}`);
  return { rateLimit: Object.freeze({ ratePerS: rate, burst }) };
}

function unique(values: readonly string[], where: string, field: string, fail: Fail, secret = false): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) fail(`${where}[${i}].${field}`, secret ? "the same token is listed twice" : `duplicate ${field} ${JSON.stringify(v)}`);
    seen.add(v);
  });
}

function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  // The value itself is not echoed: it may be a secret in the wrong place.
  return `a ${typeof v}`;
}
