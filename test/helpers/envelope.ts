// The one check of an error answer: its status, a JSON content type, and a body that is exactly
// the envelope {error, code[, details]} with a non-empty message.
import { expect } from "chai";

type Json = Record<string, unknown>;

/** An answer read raw (status, headers, body bytes) or already parsed (status, content type, JSON body). */
export type EnvelopeAnswer =
  | { readonly status: number; readonly headers: Readonly<Record<string, string | string[] | undefined>>; readonly body: Buffer }
  | { readonly status: number; readonly contentType: string; readonly body: Json };

/** Checks the envelope and returns its body; `error` also checks the message (exact text or pattern). */
export function expectEnvelope(r: EnvelopeAnswer, status: number, code: string, error?: string | RegExp): Json {
  const raw = "headers" in r;
  const text = raw ? r.body.toString("utf8") : JSON.stringify(r.body);
  expect(r.status, `status; body ${text.slice(0, 300)}`).to.equal(status);
  const contentType = raw ? r.headers["content-type"] : r.contentType;
  expect(contentType, "content type of an error").to.match(/^application\/json/);
  const body = raw ? (JSON.parse(text) as Json) : r.body;
  expect(Object.keys(body).every((k) => ["error", "code", "details"].includes(k)), text).to.equal(true);
  expect(body.code, text).to.equal(code);
  expect(body.error).to.be.a("string").and.not.equal("");
  if (typeof error === "string") expect(body.error).to.equal(error);
  else if (error) expect(body.error).to.match(error);
  return body;
}
