// The operations of the two OpenAPI documents, with $refs resolved: what the fuzzer generates
// requests from and what the oracle checks answers against (the documented statuses).
import { readFileSync } from "node:fs";
import { parse } from "yaml";

export type Api = "client" | "mgmt";

/** A JSON Schema, as the documents use it (a subset). */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Schema;
}

export interface Operation {
  api: Api;
  method: string;
  /** The path template, such as /v1/cache/{key}. */
  path: string;
  params: Parameter[];
  /** Content types of the request body with their schemas; undefined when the operation takes none. */
  body?: { contentType: string; schema: Schema }[];
  /** Documented response statuses. */
  statuses: number[];
  /** Error statuses (≥ 400) whose JSON body is documented as something other than the envelope, with its required properties. */
  bodies: Record<number, string[]>;
  /** The scopes the operation needs ([] for any authenticated identity), or "public". */
  scopes: string[] | "public";
  /** The JSON schema of the error envelope's `code`. */
  id: string;
}

type Json = Record<string, unknown>;

function resolve(doc: Json, node: unknown, seen: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(node)) return node.map((n) => resolve(doc, n, seen));
  if (!node || typeof node !== "object") return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === "string") {
    if (seen.has(ref)) return {};
    let target: unknown = doc;
    for (const part of ref.replace(/^#\//, "").split("/")) target = (target as Json)[part];
    return resolve(doc, target, new Set([...seen, ref]));
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(doc, v, seen)]));
}

/** The error responses documented with a JSON body that is not the {error, code} envelope. */
function nonEnvelopeBodies(responses: Json | undefined): Record<number, string[]> {
  const out: Record<number, string[]> = {};
  for (const [status, response] of Object.entries(responses ?? {})) {
    const code = Number(status);
    const schema = (response as { content?: Record<string, { schema?: Schema }> }).content?.["application/json"]?.schema;
    if (!Number.isInteger(code) || code < 400 || !schema) continue;
    const required = schema.required ?? [];
    if (!(required.includes("error") && required.includes("code"))) out[code] = required;
  }
  return out;
}

const METHODS = ["get", "head", "put", "post", "delete", "patch", "options"];

function scopesOf(security: unknown): string[] | "public" {
  if (!Array.isArray(security)) return [];
  if (security.length === 0) return "public";
  const scopes = new Set<string>();
  for (const req of security as Record<string, string[]>[]) for (const list of Object.values(req)) for (const s of list) scopes.add(s);
  return [...scopes];
}

export function loadOperations(file: string, api: Api): Operation[] {
  const doc = parse(readFileSync(file, "utf8")) as Json;
  const paths = resolve(doc, doc.paths) as Record<string, Json>;
  const globalSecurity = doc.security;
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    const shared = (item.parameters as Parameter[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const params = [...shared, ...((op.parameters as Parameter[] | undefined) ?? [])].map((p) => ({ ...p, required: p.required ?? p.in === "path", schema: p.schema ?? {} }));
      const content = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content;
      ops.push({
        api,
        method: method.toUpperCase(),
        path,
        params,
        ...(content ? { body: Object.entries(content).map(([contentType, c]) => ({ contentType, schema: c.schema ?? {} })) } : {}),
        statuses: Object.keys((op.responses as Json | undefined) ?? {}).map(Number).filter(Number.isInteger),
        bodies: nonEnvelopeBodies(op.responses as Json | undefined),
        scopes: scopesOf(op.security ?? globalSecurity),
        id: `${api} ${method.toUpperCase()} ${path}`,
      });
    }
  }
  return ops;
}

/** The error codes of the envelope, from the client document's ErrorCode schema. */
export function errorCodes(file: string): string[] {
  const doc = parse(readFileSync(file, "utf8")) as { components: { schemas: { ErrorCode: { enum: string[] } } } };
  return doc.components.schemas.ErrorCode.enum;
}
