// Node ids travel in HTTP headers (X-Cache-Node, X-Cache-Origin, X-Cache-Owners), log records and
// seeds, so they are restricted to a header-safe alphabet.

/** One character of the node id alphabet: a letter, a digit, ".", "_" or "-" (a regex class). */
export const NODE_ID_CHARS = "[A-Za-z0-9._-]";

/** A node id: 1 to 128 characters of the node id alphabet. */
export const NODE_ID_PATTERN = new RegExp(`^${NODE_ID_CHARS}{1,128}$`);

export function isNodeId(value: string): boolean {
  return NODE_ID_PATTERN.test(value);
}
