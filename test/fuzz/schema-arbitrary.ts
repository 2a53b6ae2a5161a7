// fast-check arbitraries for the JSON Schema subset of the OpenAPI documents: valid-looking values
// that the mutations then break. Arrays and strings stay short, so a case stays cheap.
import fc from "fast-check";
import type { Schema } from "./openapi-model.js";

const MAX_ITEMS = 6;
const MAX_DEPTH = 4;

function typeOf(schema: Schema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
}

/** Text that is sometimes ASCII, sometimes any Unicode (lone surrogates included). */
export function fuzzText(maxLength = 24): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength }) }, { weight: 1, arbitrary: fc.string({ maxLength, unit: "binary" }) }, { weight: 1, arbitrary: fc.string({ maxLength, unit: "grapheme" }) });
}

export function arbitraryFor(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((s) => arbitraryFor(s, depth + 1)));
  if (schema.allOf && schema.allOf.length > 0) {
    const merged: Schema = { type: "object", properties: {}, required: [] };
    for (const s of schema.allOf) {
      Object.assign(merged.properties as object, s.properties ?? {});
      merged.required?.push(...(s.required ?? []));
    }
    return arbitraryFor(merged, depth);
  }
  switch (typeOf(schema)) {
    case "string":
      if (schema.pattern) return fc.oneof(fc.stringMatching(new RegExp(schema.pattern)), fuzzText());
      if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      return fuzzText(Math.min(schema.maxLength ?? 24, 64));
    case "integer":
      return fc.oneof(fc.integer({ min: schema.minimum ?? -10, max: schema.maximum ?? 100_000 }), fc.integer());
    case "number":
      return fc.double({ noNaN: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(depth >= MAX_DEPTH ? fc.constant(null) : arbitraryFor(schema.items ?? {}, depth + 1), { maxLength: Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS) });
    case "object": {
      const props = schema.properties ?? {};
      if (Object.keys(props).length === 0 || depth >= MAX_DEPTH) return fc.dictionary(fuzzText(8), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) record[k] = arbitraryFor(s, depth + 1);
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((k) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
