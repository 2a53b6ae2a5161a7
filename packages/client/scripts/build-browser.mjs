// Bundles the browser entry (dist/browser.js: the core without OAuth client credentials) with
// esbuild: one minified ES module with its dependencies (openapi-fetch, eventsource-parser).
// platform "browser" makes any Node built-in in the core fail the build. Prints the gzip size and fails above the 20 KB budget.
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

/** Budget of the gzipped browser bundle (bytes). */
const GZIP_BUDGET_BYTES = 20 * 1024;

const root = fileURLToPath(new URL("..", import.meta.url));
const outfile = `${root}dist/browser/hypercache-client.min.js`;
await build({
  entryPoints: [`${root}dist/browser.js`],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  minify: true,
  sourcemap: true,
  legalComments: "none",
  outfile,
  logLevel: "warning",
});
const gzipBytes = gzipSync(readFileSync(outfile), { level: 9 }).length;
console.log(`browser bundle: ${outfile.slice(root.length)} ${(gzipBytes / 1024).toFixed(1)} KB gzip (budget ${GZIP_BUDGET_BYTES / 1024} KB)`);
if (gzipBytes > GZIP_BUDGET_BYTES) {
  console.error(`browser bundle is ${gzipBytes} bytes gzipped, over the ${GZIP_BUDGET_BYTES}-byte budget`);
  process.exit(1);
}
