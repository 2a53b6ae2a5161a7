// Node ids travel in HTTP headers (X-Cache-Node, X-Cache-Origin, X-Cache-Owners), log records and
// seeds, so they are restricted to a header-safe alphabet.

/** The node id alphabet: letters, digits, ".", "_" and "-", 1 to 128 characters. */
export const NODE_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export function isNodeId(value: string): boolean {
  return NODE_ID_PATTERN.test(value);
}
