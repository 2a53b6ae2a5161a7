// The files of a run directory, and reading them back for an offline check.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseJsonLines, recordFrom, type KeyPlan, type Op, type RunEvent, type RunRecord } from "../checker/history.js";

export const FILES = {
  history: "history.jsonl",
  events: "events.jsonl",
  keys: "keys.json",
  report: "report.json",
  table: "report.md",
  logs: "logs",
} as const;

export function loadRun(dir: string): RunRecord {
  const ops = parseJsonLines<Op>(readFileSync(path.join(dir, FILES.history), "utf8"));
  const events = parseJsonLines<RunEvent>(readFileSync(path.join(dir, FILES.events), "utf8"));
  const keys = JSON.parse(readFileSync(path.join(dir, FILES.keys), "utf8")) as KeyPlan[];
  return recordFrom(ops, keys, events);
}
