// Locates files shipped with the package (the OpenAPI documents) from the running module,
// whether it runs from src/ (tsx) or dist/src/ (built).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest ancestor of `fromUrl` holding this package's package.json. */
export function packageRoot(fromUrl: string): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "hypercache-server") return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("package root of hypercache-server not found");
    dir = parent;
  }
}
