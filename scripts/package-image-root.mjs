// Assembles the runtime folder of the container image (default build/image-root): the compiled
// dist/src and dist/gen, the dashboard (dist/dashboard), package.json and package-lock.json, the
// OpenAPI files the server reads at start-up (openapi/*.yaml, found from the package root) and the
// production node_modules only,
// installed from the lockfile (`npm ci --omit=dev --ignore-scripts`, from the npm cache when it
// can). Run it after `npm run build`; `npm run package` does both.
// Usage: node scripts/package-image-root.mjs [--out DIR]
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const outArg = process.argv.indexOf("--out");
const out = resolve(root, outArg >= 0 ? (process.argv[outArg + 1] ?? "") : "build/image-root");
/**
 * Folders of dist/ the server runs from: tsconfig.build.json compiles src/ and gen/, and
 * scripts/build-dashboard.mjs writes the dashboard's files (read into memory at start-up).
 */
const distParts = ["src", "gen", "dashboard"];

function fail(message) {
  console.error(`package: ${message}`);
  process.exit(1);
}

if (outArg >= 0 && !process.argv[outArg + 1]) fail("--out needs a folder");
if (out === root || root.startsWith(out + "/")) fail(`refusing to write into ${out}`);
if (!existsSync(join(root, "dist", "src", "main.js"))) fail("dist/src/main.js is missing: run npm run build first");

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// Compiled JavaScript only: source maps point at TypeScript sources the image does not carry.
for (const part of distParts) {
  cpSync(join(root, "dist", part), join(out, "dist", part), { recursive: true, filter: (src) => !src.endsWith(".map") });
}
for (const file of ["package.json", "package-lock.json"]) cpSync(join(root, file), join(out, file));
mkdirSync(join(out, "openapi"));
for (const name of readdirSync(join(root, "openapi")).filter((n) => n.endsWith(".yaml"))) {
  cpSync(join(root, "openapi", name), join(out, "openapi", name));
}

// Production dependencies exactly as locked; no install scripts (none of them needs one).
const npm = spawnSync(
  "npm",
  ["ci", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
  { cwd: out, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, NODE_ENV: "production" } },
);
if (npm.status !== 0) fail(`npm ci --omit=dev failed in ${out} (exit ${npm.status ?? npm.signal})`);
console.log(`package: ${out} is ready (node dist/src/main.js)`);
