// Replaces a file the way a Kubernetes Secret update does: a new file renamed over the old one,
// so a reader never sees it half-written (TLS reload tests).
import { renameSync, writeFileSync } from "node:fs";

export function replaceFile(path: string, bytes: Buffer): void {
  writeFileSync(`${path}.new`, bytes);
  renameSync(`${path}.new`, path);
}
