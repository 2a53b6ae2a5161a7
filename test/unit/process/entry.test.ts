// The process entry catches stop signals before anything heavy loads: with node as PID 1 (the
// container image), a signal without a handler is ignored, and the server's modules take about
// 250 ms to load. A review's SIGTERM 50 ms after start was lost: the node booted and served until
// it was killed. The entry may import only BootSignals statically, and BootSignals nothing.
import { expect } from "chai";
import { readFileSync } from "node:fs";

/** The module specifiers a source file imports statically (`import ... from "x"`, `import "x"`). */
function staticImports(path: string): string[] {
  const text = readFileSync(new URL(path, import.meta.url), "utf8");
  return [...text.matchAll(/^\s*import\s+(?!type\b)(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm)].map((m) => m[1] as string);
}

describe("process entry", () => {
  it("src/main.ts imports only ./boot-signals.js statically; the server comes by a dynamic import after the handlers are in place", () => {
    expect(staticImports("../../../src/main.ts")).to.deep.equal(["./boot-signals.js"]);
    expect(readFileSync(new URL("../../../src/main.ts", import.meta.url), "utf8")).to.match(/new BootSignals\([\s\S]*await import\("\.\/server\.js"\)/);
  });

  it("src/boot-signals.ts imports nothing", () => {
    expect(staticImports("../../../src/boot-signals.ts")).to.deep.equal([]);
  });

  it("the compiled entry the image and npm start run is the same", () => {
    expect(staticImports("../../../dist/src/main.js")).to.deep.equal(["./boot-signals.js"]);
  });
});
