// The fuzz cases: a valid request generated from an OpenAPI operation, then (most of the time) one
// mutation of its body, headers, path, method or framing; and raw bytes and Connect calls for the
// peer (dist) listener. Mutations are data, so fast-check shrinks them.
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import type { BytesCase, Framing, HttpCase, Listener } from "./fuzz-case.js";
import type { Operation } from "./openapi-model.js";
import { arbitraryFor, fuzzText } from "./schema-arbitrary.js";

/** The credentials of the fuzz target (see target-node.ts). */
export interface Tokens {
  readWrite: string;
  readOnly: string;
  admin: string;
  peer: string;
}

/** Keys the fuzzer never touches: the canaries checked after the run. */
export const CANARY_PREFIX = "canary-";
const HTTP2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/** Operations that would stop the target serving the rest of the run: never sent with a credential that can do them. */
const DESTRUCTIVE = new Set(["mgmt POST /clear", "mgmt POST /dist/drain"]);

/** Percent-encodes every byte outside the unreserved set (a lone surrogate becomes U+FFFD first). */
export function encodeSegment(text: string): string {
  let out = "";
  for (const b of Buffer.from(text, "utf8")) {
    const ch = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const keyArb: fc.Arbitrary<string> = fc
  .oneof({ weight: 2, arbitrary: fc.constantFrom("k0", "k1", "k2", "k3", "user:1", "a/b", "keys") }, { weight: 1, arbitrary: fuzzText(40) })
  .filter((k) => k.length > 0 && !k.startsWith(CANARY_PREFIX));

function authArb(tokens: Tokens, op: Operation): fc.Arbitrary<[string, string][]> {
  const bearer = (t: string): [string, string][] => [["Authorization", `Bearer ${t}`]];
  const options: fc.WeightedArbitrary<[string, string][]>[] = [
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fuzzText(30).map((t) => bearer(t)) },
    { weight: 1, arbitrary: fc.constantFrom<[string, string][]>([["Authorization", "Basic !!!"]], [["Authorization", "Bearer"]], [["Authorization", "Digest x"]]) },
  ];
  if (!DESTRUCTIVE.has(op.id)) {
    options.push({ weight: 6, arbitrary: fc.constant(bearer(tokens.readWrite)) }, { weight: 2, arbitrary: fc.constant(bearer(tokens.admin)) }, { weight: 1, arbitrary: fc.constant(bearer(tokens.readOnly)) });
  } else if (op.id !== "mgmt POST /dist/drain") {
    options.push({ weight: 3, arbitrary: fc.constant(bearer(tokens.readWrite)) });
  }
  return fc.oneof(...options);
}

interface BaseRequest {
  op: Operation;
  segments: Record<string, string>;
  query: [string, string][];
  headers: [string, string][];
  body: Buffer;
}

function baseRequestArb(op: Operation, tokens: Tokens): fc.Arbitrary<BaseRequest> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query");
  const segments = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, p.name === "key" ? keyArb : fuzzText(20).filter((s) => s.length > 0)])) as Record<string, fc.Arbitrary<string>>);
  const query = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        arbitraryFor(p.schema).map((v): [string, string] => [p.name, typeof v === "string" ? v : JSON.stringify(v)]),
        { nil: undefined, freq: p.required ? 100 : 2 },
      ),
    ),
  ).map((list) => list.filter((x): x is [string, string] => x !== undefined));
  const bodyArb: fc.Arbitrary<{ ct?: string; bytes: Buffer }> = op.body
    ? fc.constantFrom(...op.body).chain((b) =>
        b.contentType.includes("json")
          ? arbitraryFor(b.schema).map((v) => ({ ct: "application/json", bytes: Buffer.from(JSON.stringify(v) ?? "null") }))
          : fc.uint8Array({ maxLength: 256 }).map((u) => ({ ct: b.contentType === "*/*" ? "text/plain" : b.contentType, bytes: Buffer.from(u) })),
      )
    : fc.constant({ bytes: Buffer.alloc(0) });
  const accept = fc.constantFrom<[string, string][]>([], [["Accept", "application/json"]], [["Accept", "application/octet-stream"]], [["Accept", "*/*"]]);
  return fc.record({ segments, query, auth: authArb(tokens, op), accept, body: bodyArb }).map(({ segments, query, auth, accept, body }) => ({
    op,
    segments,
    query,
    headers: [...auth, ...accept, ...(body.ct ? ([["Content-Type", body.ct]] as [string, string][]) : [])],
    body: body.bytes.toString("utf8").includes(CANARY_PREFIX) ? Buffer.from("{}") : body.bytes,
  }));
}

type Mutation =
  | { m: "none" }
  | { m: "body:random"; bytes: Uint8Array }
  | { m: "body:truncated"; at: number }
  | { m: "body:nested"; depth: number; open: string }
  | { m: "body:wrong-type"; value: unknown }
  | { m: "body:proto"; variant: number }
  | { m: "header:oversized"; size: number }
  | { m: "header:invalid-char"; ch: string; inName: boolean }
  | { m: "header:accept"; value: string }
  | { m: "header:content-type"; value: string }
  | { m: "header:expect"; value: string }
  | { m: "header:many"; count: number }
  | { m: "framing"; framing: Framing }
  | { m: "path:bad-percent"; junk: string }
  | { m: "path:nul"; raw: boolean }
  | { m: "path:long-key"; bytes: number }
  | { m: "path:dots"; variant: string }
  | { m: "path:query-junk"; query: string }
  | { m: "method"; method: string };

const PROTO_BODIES = [
  '{"__proto__":{"polluted":true},"items":[],"keys":[]}',
  '{"constructor":{"prototype":{"polluted":true}},"keys":["k0"]}',
  '{"items":[{"key":"k0","value":"v","__proto__":{"ttl_ms":1}}]}',
  '{"keys":["__proto__","constructor","prototype"]}',
  '{"items":[{"key":"__proto__","value":"x"}]}',
];

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Mutation>({ m: "none" }) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 1024 }).map((bytes): Mutation => ({ m: "body:random", bytes })) },
  { weight: 1, arbitrary: fc.nat().map((at): Mutation => ({ m: "body:truncated", at })) },
  { weight: 1, arbitrary: fc.record({ depth: fc.oneof(fc.integer({ min: 10, max: 2000 }), fc.integer({ min: 2000, max: 500_000 })), open: fc.constantFrom("[", '{"a":', '{"items":[') }).map((r): Mutation => ({ m: "body:nested", ...r })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value): Mutation => ({ m: "body:wrong-type", value })) },
  { weight: 1, arbitrary: fc.nat({ max: PROTO_BODIES.length - 1 }).map((variant): Mutation => ({ m: "body:proto", variant })) },
  { weight: 1, arbitrary: fc.constantFrom(8 * 1024, 17 * 1024, 63 * 1024, 70 * 1024, 200 * 1024).map((size): Mutation => ({ m: "header:oversized", size })) },
  { weight: 1, arbitrary: fc.record({ ch: fc.constantFrom("\x00", "\x7f", "\r", "\x0b", "\xe9", "\x01", " ", ":"), inName: fc.boolean() }).map((r): Mutation => ({ m: "header:invalid-char", ...r })) },
  { weight: 1, arbitrary: fc.oneof(fuzzText(40), fc.constantFrom("application/json;q=abc", "*/*;q=0", "application/json;q=0, */*;q=0", "text/html", ";;;", "application/octet-stream;q=2, application/json")).map((value): Mutation => ({ m: "header:accept", value })) },
  { weight: 1, arbitrary: fc.oneof(fuzzText(30), fc.constantFrom("application/json; charset=utf-16", "application/json; charset=latin1", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json;;", "")).map((value): Mutation => ({ m: "header:content-type", value })) },
  { weight: 1, arbitrary: fc.constantFrom("100-continue", "200-ok", "", "100-continue, foo").map((value): Mutation => ({ m: "header:expect", value })) },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 3000 }).map((count): Mutation => ({ m: "header:many", count })) },
  { weight: 2, arbitrary: fc.constantFrom<Framing>("chunked", "duplicate-length", "length-and-chunked", "truncated").map((framing): Mutation => ({ m: "framing", framing })) },
  { weight: 2, arbitrary: fc.constantFrom("%", "%z", "%zz", "%e9", "%ED%A0%80", "%c0%af", "%ff%fe", "%%41", "%2", "\xe9", " ", "#", "?%").map((junk): Mutation => ({ m: "path:bad-percent", junk })) },
  { weight: 1, arbitrary: fc.boolean().map((raw): Mutation => ({ m: "path:nul", raw })) },
  { weight: 1, arbitrary: fc.constantFrom(4096, 4097, 10 * 1024, 70 * 1024).map((bytes): Mutation => ({ m: "path:long-key", bytes })) },
  { weight: 1, arbitrary: fc.constantFrom("/..", "/./", "//", "/", "/%2e%2e/", "\\").map((variant): Mutation => ({ m: "path:dots", variant })) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fuzzText(60).map(encodeURI),
        fc.constantFrom("consistency=bogus", "consistency=one&consistency=all", "ttl=-1s", "ttl=0ms", "ttl=99999999999999h", "limit=0", "limit=-5", "max=abc", "cursor=%ZZ", "q=" + "*".repeat(5000), "a=" + "b".repeat(17 * 1024), "&&&=&", "ttl_ms=1"),
      )
      .map((query): Mutation => ({ m: "path:query-junk", query })),
  },
  { weight: 1, arbitrary: fc.constantFrom("PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND", "get", "FOO", "M-SEARCH", "PUT", "POST", "DELETE", "GET", "HEAD").map((method): Mutation => ({ m: "method", method })) },
);

function buildTarget(r: BaseRequest, keyOverride?: string): string {
  let path = r.op.path;
  for (const [name, value] of Object.entries(r.segments)) path = path.replace(`{${name}}`, name === "key" && keyOverride !== undefined ? keyOverride : encodeSegment(value));
  const qs = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeSegment(v)}`).join("&");
  return qs ? `${path}?${qs}` : path;
}

function withMutation(r: BaseRequest, mut: Mutation, listener: Listener): HttpCase {
  const c: HttpCase = { kind: "http", listener, operation: r.op.id, method: r.op.method, target: buildTarget(r), headers: [...r.headers], body: r.body.toString("base64"), framing: "length", mutations: [] };
  const setBody = (b: Buffer | string) => (c.body = Buffer.from(b).toString("base64"));
  const keyAt = (replacement: string) => (r.op.path.includes("{key}") ? buildTarget(r, replacement) : `${buildTarget(r)}/${replacement}`);
  switch (mut.m) {
    case "none":
      return c;
    case "body:random":
      setBody(Buffer.from(mut.bytes));
      break;
    case "body:truncated":
      setBody(r.body.subarray(0, r.body.length === 0 ? 0 : mut.at % r.body.length));
      break;
    case "body:nested":
      setBody(mut.open.repeat(mut.depth));
      break;
    case "body:wrong-type":
      setBody(JSON.stringify(mut.value) ?? "null");
      break;
    case "body:proto":
      setBody(PROTO_BODIES[mut.variant] as string);
      break;
    case "header:oversized":
      c.headers.push(["X-Fuzz", "a".repeat(mut.size)]);
      break;
    case "header:invalid-char":
      c.headers.push(mut.inName ? [`X-Fu${mut.ch}zz`, "1"] : ["X-Fuzz", `a${mut.ch}b`]);
      break;
    case "header:accept":
      c.headers = c.headers.filter(([n]) => n !== "Accept").concat([["Accept", mut.value]]);
      break;
    case "header:content-type":
      c.headers = c.headers.filter(([n]) => n !== "Content-Type").concat([["Content-Type", mut.value]]);
      break;
    case "header:expect":
      c.headers.push(["Expect", mut.value]);
      break;
    case "header:many":
      for (let i = 0; i < mut.count; i++) c.headers.push([`X-F${i}`, "v"]);
      break;
    case "framing":
      c.framing = mut.framing;
      break;
    case "path:bad-percent":
      c.target = keyAt(`k${mut.junk}x`);
      break;
    case "path:nul":
      c.target = keyAt(mut.raw ? "k\x00x" : "k%00x");
      break;
    case "path:long-key":
      c.target = keyAt("k".repeat(mut.bytes));
      break;
    case "path:dots":
      c.target = `${buildTarget(r)}${mut.variant}`;
      break;
    case "path:query-junk":
      c.target = `${buildTarget(r).split("?")[0]}?${mut.query}`;
      break;
    case "method":
      // the operation's own method is no mutation (the oracle would judge it as one)
      if (mut.method === r.op.method) return c;
      c.method = mut.method;
      break;
  }
  c.mutations = [mut.m === "method" ? `method:${mut.method}` : mut.m === "framing" ? `framing:${mut.framing}` : mut.m];
  return c;
}

/** Requests for one listener's operations, each possibly mutated. */
export function operationCaseArb(ops: readonly Operation[], listener: Listener, tokens: Tokens): fc.Arbitrary<HttpCase> {
  return fc
    .constantFrom(...ops)
    .chain((op) => fc.tuple(baseRequestArb(op, tokens), mutationArb))
    .map(([r, mut]) => withMutation(r, mut, listener));
}

/** The peer service's methods the fuzzer calls (Drain would stop the target; Exchange is a stream). */
export const PEER_METHODS = ["Forward", "Set", "Remove", "Get", "Keys", "Probe", "Gossip", "MerkleRoot", "MerkleLeaves", "MerkleRange", "Health"];
export const PEER_PREFIX = "/internal/hypercache.peer.v1.PeerService/";
const FIXED_PATHS: [string, string][] = [
  ["POST", "/internal/set"],
  ["GET", "/internal/keys"],
  ["GET", "/internal/probe?target=n9"],
  ["POST", "/internal/gossip"],
  ["GET", "/health"],
];

/** Junk before (or instead of) the HTTP/2 preface, and Connect calls with broken bodies, for the dist listener. */
export function distCaseArb(tokens: Tokens): fc.Arbitrary<BytesCase | HttpCase> {
  const junk = fc
    .record({ before: fc.uint8Array({ maxLength: 600 }), preface: fc.boolean(), after: fc.uint8Array({ maxLength: 300 }) })
    .map(({ before, preface, after }): BytesCase => ({
      kind: "bytes",
      listener: "dist",
      bytes: Buffer.concat([Buffer.from(before), Buffer.from(preface ? HTTP2_PREFACE : ""), Buffer.from(after)]).toString("base64"),
      mutations: [preface ? "junk-around-preface" : "junk"],
    }));
  const route = fc.oneof(
    fc.constantFrom(...PEER_METHODS).map((m): [string, string] => ["POST", PEER_PREFIX + m]),
    fc.constantFrom(...FIXED_PATHS),
  );
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
    fc.uint8Array({ maxLength: 512 }).map((u) => Buffer.from(u)),
    fc.constantFrom('{"items":[{"key":"","version":"-1","origin":"!"}]}', '{"items":[{"key":"k","version":"9007199254740993","origin":"n1"}]}', '{"members":[{"id":"x","incarnation":"-1"}]}', '{"__proto__":{"a":1}}'),
  );
  const call = fc
    .record({
      route,
      body,
      auth: fc.constantFrom("peer", "none", "wrong"),
      contentType: fc.constantFrom("application/json", "application/proto", "application/connect+json", "text/plain"),
      gzip: fc.constantFrom("no", "yes", "lie"),
    })
    .map(({ route: [method, target], body: b, auth, contentType, gzip }): HttpCase => {
      const payload = b.toString("utf8").includes(CANARY_PREFIX) ? Buffer.from("{}") : b;
      const headers: [string, string][] = [["Content-Type", contentType]];
      if (auth === "peer") headers.push(["Authorization", `Bearer ${tokens.peer}`]);
      if (auth === "wrong") headers.push(["Authorization", "Bearer not-the-token"]);
      if (gzip !== "no") headers.push(["Content-Encoding", "gzip"]);
      return {
        kind: "http",
        listener: "dist",
        method,
        target,
        headers,
        body: (gzip === "yes" ? gzipSync(payload) : payload).toString("base64"),
        framing: "length",
        mutations: [`dist-${auth}`, `gzip-${gzip}`],
      };
    });
  return fc.oneof(junk, call);
}
