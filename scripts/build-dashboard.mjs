// Builds the web dashboard (dashboard/src) into dist/dashboard: one minified ES module and one
// style sheet under assets/ with content-hashed names, and index.html naming them. esbuild
// bundles Preact, htm, uPlot and the SDK's browser build (@hypercache/client/browser, so the
// packages are built first); no network is used.
// Prints the gzip sizes and fails above the 150 KB budget (script and style sheet together).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** Budget of the gzipped script and style sheet together (bytes). */
const GZIP_BUDGET_BYTES = 150 * 1024;

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "dist", "dashboard");
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, "dashboard", "src", "main.ts") },
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify: true,
  legalComments: "none",
  entryNames: "[name]-[hash]",
  outdir: join(out, "assets"),
  metafile: true,
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((n) => n.endsWith(".js"));
const css = outputs.find((n) => n.endsWith(".css"));
if (!js || !css) {
  console.error(`dashboard build: expected one .js and one .css output, got ${outputs.join(", ")}`);
  process.exit(1);
}
// The icon gets a content-hashed name like the bundle (8 hex digits of its SHA-256, upper case).
const icon = readFileSync(join(root, "dashboard", "favicon.svg"));
const iconName = `favicon-${createHash("sha256").update(icon).digest("hex").slice(0, 8).toUpperCase()}.svg`;
writeFileSync(join(out, "assets", iconName), icon);
const html = readFileSync(join(root, "dashboard", "index.html"), "utf8").replace("%JS%", js).replace("%CSS%", css).replace("%ICON%", iconName);
writeFileSync(join(out, "index.html"), html);

const gz = (name) => gzipSync(readFileSync(join(out, "assets", name)), { level: 9 }).length;
const jsBytes = gz(js);
const cssBytes = gz(css);
const total = jsBytes + cssBytes;
const kb = (n) => (n / 1024).toFixed(1);
console.log(`dashboard bundle: ${js} ${kb(jsBytes)} KB + ${css} ${kb(cssBytes)} KB = ${kb(total)} KB gzip (budget ${GZIP_BUDGET_BYTES / 1024} KB)`);
if (total > GZIP_BUDGET_BYTES) {
  console.error(`dashboard bundle is ${total} bytes gzipped, over the ${GZIP_BUDGET_BYTES}-byte budget`);
  process.exit(1);
}
