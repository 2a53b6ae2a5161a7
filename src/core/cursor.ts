// Opaque paging cursors: a small JSON object in base64url. Decoding validates the shape and
// returns undefined for anything a client could have garbled or forged.

export function encodeCursor(fields: Record<string, number | string>): string {
  return Buffer.from(JSON.stringify(fields), "utf8").toString("base64url");
}

/** The decoded fields, or undefined when `text` is not a cursor this service produced. */
export function decodeCursor(text: string): Record<string, unknown> | undefined {
  if (text.length === 0 || text.length > 512 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A non-negative safe integer field, or undefined. */
export function cursorInt(fields: Record<string, unknown>, name: string): number | undefined {
  const v = fields[name];
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}
