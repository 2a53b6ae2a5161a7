// Renders the chart with the helm binary of `npm run k8s-tools` (fetched on first use) and parses
// the manifests the way the API server reads them (YAML 1.1, like sigs.k8s.io/yaml).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { ensureHelm } from "../../scripts/k8s-tools.js";
import type { K8sObject } from "./k8s-rules.js";

export const CHART = fileURLToPath(new URL("../../deploy/helm/hypercache", import.meta.url));
export const RELEASE = "hc";
export const NAMESPACE = "cache";

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function helm(args: readonly string[]): HelmResult {
  const r = spawnSync(ensureHelm(), args, { cwd: CHART, encoding: "utf8", maxBuffer: 32 << 20, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", HELM_CACHE_HOME: "/tmp/helm-cache", HELM_CONFIG_HOME: "/tmp/helm-config", HELM_DATA_HOME: "/tmp/helm-data" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function valueArgs(files: readonly string[], sets: readonly string[] = []): string[] {
  return [...files.flatMap((f) => ["-f", f]), ...sets.flatMap((s) => ["--set", s])];
}

/** `helm template` with these values files (relative to the chart) and --set values. */
export function render(files: readonly string[], sets: readonly string[] = []): K8sObject[] {
  const r = helm(["template", RELEASE, ".", "--namespace", NAMESPACE, ...valueArgs(files, sets)]);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  const docs = parseAllDocuments(r.stdout, { version: "1.1" });
  const objects: K8sObject[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
    const value = doc.toJS() as K8sObject | null;
    if (value !== null) objects.push(value);
  }
  return objects;
}
