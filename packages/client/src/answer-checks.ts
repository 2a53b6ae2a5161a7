// What a 2xx answer must look like before the client reads it as a result. A proxy's login page,
// an error envelope sent with 200, JSON cut short or of another shape, a value that is not base64:
// each becomes a BadAnswerError naming the endpoint, never a result, a SyntaxError or a TypeError.
// Only the fields the client reads or hands on as typed are checked; extra fields are allowed.
import { decodeBase64 } from "./base64.js";
import { badAnswer } from "./errors.js";
import type { HeadersLike } from "./fetch-types.js";

/** The answer a check blames: its status, its endpoint and, for the JSON checks, its headers. */
export interface Blamed {
  readonly status: number;
  readonly endpoint: string;
  readonly headers: HeadersLike;
}

/** A field's test. */
export type Field = (v: unknown) => boolean;
/** The fields an answer must have, each with its test. */
export type Shape = Readonly<Record<string, Field>>;

export const isString: Field = (v) => typeof v === "string";
export const isNumber: Field = (v) => typeof v === "number" && Number.isFinite(v);
export const isBoolean: Field = (v) => typeof v === "boolean";
export const isStrings: Field = (v) => Array.isArray(v) && v.every((x) => typeof x === "string");
export const isObjects: Field = (v) => Array.isArray(v) && v.every((x) => x !== null && typeof x === "object");
/** `test`, or the field absent. */
export const optional = (test: Field): Field => (v) => v === undefined || test(v);

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** The JSON of a 2xx answer's body: a JSON content type, UTF-8 and well-formed, or a BadAnswerError. */
export function parseJsonAnswer(bytes: Uint8Array, from: Blamed): unknown {
  const type = from.headers.get("content-type");
  if (type === null || !JSON_TYPE.test(type)) throw badAnswer(from.status, from.endpoint, `a body of type ${type ?? "(none)"} where JSON was expected`);
  try {
    return JSON.parse(fatalUtf8.decode(bytes)) as unknown;
  } catch (err) {
    throw badAnswer(from.status, from.endpoint, "a body that is not well-formed UTF-8 JSON", { cause: err });
  }
}

/** `data` when it is a JSON object with every field of `shape`; `what` names it in the error. */
export function shaped<T>(data: unknown, shape: Shape, what: string, from: Blamed): T {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw badAnswer(from.status, from.endpoint, `${what} that is not a JSON object`);
  const record = data as Record<string, unknown>;
  for (const name in shape) {
    if (!(shape[name] as Field)(record[name])) throw badAnswer(from.status, from.endpoint, `${what} whose ${name} is missing or of the wrong type`);
  }
  return data as T;
}

/** The bytes of a base64 value of an answer. */
export function base64Field(text: string, from: Blamed): Uint8Array {
  try {
    return decodeBase64(text);
  } catch (err) {
    throw badAnswer(from.status, from.endpoint, "a value that is not base64", { cause: err });
  }
}
