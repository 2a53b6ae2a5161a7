// The corpus: every failing case the fuzzer found, shrunk, as one JSON file in test/fuzz/corpus/
// with the seed and fast-check path that found it and the problems it showed. Replayed as
// regression tests (corpus-replay.test.ts).
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FuzzCase } from "./fuzz-case.js";

export const CORPUS_DIR = fileURLToPath(new URL("./corpus/", import.meta.url));

export interface CorpusEntry {
  /** What went wrong when it was found. */
  problems: string[];
  family: string;
  seed: number;
  /** fast-check's counterexample path: `--seed S --path P` replays the run to this case. */
  path: string;
  found: string;
  case: FuzzCase;
}

export function saveEntry(entry: CorpusEntry): string {
  mkdirSync(CORPUS_DIR, { recursive: true });
  const id = createHash("sha256").update(JSON.stringify(entry.case)).digest("hex").slice(0, 12);
  const file = path.join(CORPUS_DIR, `${entry.family}-${id}.json`);
  writeFileSync(file, `${JSON.stringify(entry, null, 2)}\n`);
  return file;
}

export function loadCorpus(): { file: string; entry: CorpusEntry }[] {
  let names: string[] = [];
  try {
    names = readdirSync(CORPUS_DIR).filter((n) => n.endsWith(".json")).sort();
  } catch {
    return [];
  }
  return names.map((n) => ({ file: n, entry: JSON.parse(readFileSync(path.join(CORPUS_DIR, n), "utf8")) as CorpusEntry }));
}
