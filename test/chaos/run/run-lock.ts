// One chaos run at a time on a machine: the lab network (198.18.0.0/24 on the driver's veth) and
// the namespace names are fixed. The lock file holds the owner's pid; a stale lock is taken over.
import { readFileSync, rmSync, writeFileSync } from "node:fs";

export const LOCK_PATH = "/tmp/hypercache-chaos.lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function acquireLock(path = LOCK_PATH): () => void {
  try {
    writeFileSync(path, String(process.pid), { flag: "wx" });
  } catch {
    const owner = Number(readFileSync(path, "utf8").trim());
    if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) throw new Error(`another chaos run (pid ${owner}) holds ${path}`);
    writeFileSync(path, String(process.pid));
  }
  return () => rmSync(path, { force: true });
}
