// What a passing run leaves behind: a full chaos history is about 15 MB, so a campaign that runs
// all night would fill the disk with proofs nobody reads. A passing run keeps its report and log
// (report.md, report.json, keys.json, run.log, logs/); its history and event stream go. A failing
// run keeps everything, so `npm run chaos -- --check <dir>` can check it again.
import { rmSync } from "node:fs";
import path from "node:path";

/** The files a passing run drops, by name within its folder. */
export const BULKY_FILES: readonly string[] = ["history.jsonl", "events.jsonl"];

export function prunePassingRun(dir: string): void {
  for (const name of BULKY_FILES) rmSync(path.join(dir, name), { force: true });
}
