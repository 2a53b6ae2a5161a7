// Parsers for setting values. Each returns the parsed value or throws a SettingError whose
// message completes the sentence "<VARIABLE>: ...".
import { parseAddress, type Address } from "../core/address.js";
import { parseBaseUrl } from "../core/base-url.js";
import { formatDurationMs, parseDurationMs, TIMER_MAX_MS } from "../core/duration.js";
import { BEARER_TOKEN_RULE, isBearerToken } from "../core/bearer-token.js";
import { isNodeId } from "../core/node-id.js";

/** A bad setting value; server.ts prints it as one line and exits with code 2. */
export class SettingError extends Error {
  override readonly name = "SettingError";
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
  }
}

export type Parser<T> = (raw: string) => T;

/** Thrown by parsers; loadConfig prefixes the variable name. */
export class InvalidValue extends Error {}

/**
 * A duration of `min` ms up to TIMER_MAX_MS: Node runs a longer timer after 1 ms, so a loop set
 * to a huge interval to run "never" spun instead (a heartbeat of 1200h flapped its peers).
 */
export function durationMs(opts: { min?: number } = {}): Parser<number> {
  const min = opts.min ?? 0;
  return (raw) => {
    const ms = parseDurationMs(raw.trim()) ?? (raw.trim() === "0" ? 0 : undefined);
    if (ms === undefined) throw new InvalidValue(`expected a duration such as 200ms, 1s, 1m30s or 1h, got ${JSON.stringify(raw)}`);
    if (ms < min) throw new InvalidValue(`must be at least ${min}ms, got ${JSON.stringify(raw)}`);
    if (ms > TIMER_MAX_MS) throw new InvalidValue(`must be at most ${formatDurationMs(TIMER_MAX_MS)} (2^31-1 ms, the longest timer Node.js runs), got ${JSON.stringify(raw)}`);
    return ms;
  };
}

export function integer(opts: { min: number; max?: number }): Parser<number> {
  return (raw) => {
    const t = raw.trim();
    if (!/^-?\d+$/.test(t)) throw new InvalidValue(`expected an integer, got ${JSON.stringify(raw)}`);
    const n = Number(t);
    if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
      const range = opts.max === undefined ? `at least ${opts.min}` : `between ${opts.min} and ${opts.max}`;
      throw new InvalidValue(`must be an integer ${range}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
}

/** A decimal number (such as 0.5, 20 or 1500) within [min, max]. */
export function decimal(opts: { min: number; max: number }): Parser<number> {
  return (raw) => {
    const t = raw.trim();
    const n = /^\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
    if (!Number.isFinite(n) || n < opts.min || n > opts.max) throw new InvalidValue(`must be a number between ${opts.min} and ${opts.max}, got ${JSON.stringify(raw)}`);
    return n;
  };
}

const SIZE_UNITS: Readonly<Record<string, number>> = Object.freeze({
  "": 1, B: 1, KB: 1000, MB: 1_000_000, GB: 1_000_000_000, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3,
});

/** A byte size: plain bytes or with a unit (KB, MB, GB, KiB, MiB, GiB). */
export function byteSize(opts: { min: number; max?: number }): Parser<number> {
  return (raw) => {
    const m = /^(\d+)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/.exec(raw.trim());
    if (!m) throw new InvalidValue(`expected a size in bytes such as 8388608 or 8MiB, got ${JSON.stringify(raw)}`);
    const n = Number(m[1]) * (SIZE_UNITS[m[2] ?? ""] as number);
    if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
      const range = opts.max === undefined ? `at least ${opts.min}` : `between ${opts.min} and ${opts.max}`;
      throw new InvalidValue(`must be ${range} bytes, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
}

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    const t = raw.trim().toLowerCase();
    if (!(values as readonly string[]).includes(t)) {
      throw new InvalidValue(`expected one of ${values.join(", ")}, got ${JSON.stringify(raw)}`);
    }
    return t as T;
  };
}

/** true/false (also 1/0, yes/no, on/off), case-insensitive. */
export function boolean(): Parser<boolean> {
  return (raw) => {
    const t = raw.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(t)) return true;
    if (["false", "0", "no", "off"].includes(t)) return false;
    throw new InvalidValue(`expected true or false, got ${JSON.stringify(raw)}`);
  };
}

export function address(): Parser<Address> {
  return (raw) => {
    const a = parseAddress(raw.trim());
    if (!a) throw new InvalidValue(`expected host:port, :port or [v6]:port, got ${JSON.stringify(raw)}`);
    return a;
  };
}

/** An advertised base URL: absolute http(s), no credentials, query or fragment. */
export function baseUrl(): Parser<string> {
  return (raw) => {
    const url = parseBaseUrl(raw.trim());
    if (url === undefined) throw new InvalidValue(`expected an absolute http(s) base URL such as https://cache-1.example:8080, got ${JSON.stringify(raw)}`);
    return url;
  };
}

export function text(opts: { nonEmpty?: boolean } = {}): Parser<string> {
  return (raw) => {
    if (opts.nonEmpty && raw.trim() === "") throw new InvalidValue("must not be empty");
    return raw;
  };
}

/**
 * A bearer token, or "" (none). A token that cannot be sent in a header (a space, a non-ASCII
 * letter, a control character) would start a node that refuses every request on the listeners it
 * guards. The message never echoes the value: it is a secret.
 */
export function bearerToken(): Parser<string> {
  return (raw) => {
    if (raw !== "" && !isBearerToken(raw)) throw new InvalidValue(`${BEARER_TOKEN_RULE}; generate one with openssl rand -hex 32`);
    return raw;
  };
}

/** A DNS name (labels of letters, digits and "-"), optionally with a leading dot (it and its subdomains). */
const HOST_NAME = /^\.?(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Comma-separated host names, `.suffix` names (a name and its subdomains), or `*` (any). */
export function hostNames(): Parser<readonly string[]> {
  return (raw) => {
    const out: string[] = [];
    for (const part of raw.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      if (part !== "*" && !HOST_NAME.test(part)) throw new InvalidValue(`${JSON.stringify(part.slice(0, 300))} is not a host name, a .suffix or *`);
      out.push(part.toLowerCase());
    }
    return Object.freeze(out);
  };
}

/** A peer seed: `id@host:port`, or a bare `host:port` whose id is learned from the peer. */
export interface Seed {
  readonly id: string;
  readonly address: string;
}

export function seeds(): Parser<readonly Seed[]> {
  return (raw) => {
    const out: Seed[] = [];
    for (const part of raw.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      const at = part.lastIndexOf("@");
      const id = at >= 0 ? part.slice(0, at) : "";
      const addr = at >= 0 ? part.slice(at + 1) : part;
      const parsed = parseAddress(addr);
      if (!parsed || parsed.port === 0) throw new InvalidValue(`seed ${JSON.stringify(part)} is not id@host:port`);
      if (at >= 0 && !isNodeId(id)) throw new InvalidValue(`seed ${JSON.stringify(part)} needs a node id of letters, digits, ".", "_" and "-"`);
      out.push(Object.freeze({ id, address: addr }));
    }
    return out;
  };
}
