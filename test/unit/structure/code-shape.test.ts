// The shape STYLE.md asks of the source: files stay under 400 lines and functions under 80, and
// the cluster layer lives in src/cluster/ (never src/dist/, which is also the build output).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SRC = join(ROOT, "src");
const FILE_LINES_MAX = 400;
const FUNCTION_LINES_MAX = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

/** Functions (of any kind) longer than `max` lines, as "file:line name (n lines)". */
function longFunctions(path: string, max: number): string[] {
  const sf = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const first = sf.getLineAndCharacterOfPosition(n.getStart()).line;
      const last = sf.getLineAndCharacterOfPosition(n.end).line;
      const name = "name" in n && n.name ? n.name.getText() : "(anonymous)";
      if (last - first + 1 > max) out.push(`${relative(ROOT, path)}:${first + 1} ${name} (${last - first + 1} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("structure: the shape of src/", () => {
  const files = sourceFiles(SRC);

  it(`no source file is over ${FILE_LINES_MAX} lines`, () => {
    const long = files.map((f) => [relative(ROOT, f), readFileSync(f, "utf8").split("\n").length] as const).filter(([, n]) => n > FILE_LINES_MAX);
    expect(long).to.deep.equal([]);
  });

  it(`no source function is over ${FUNCTION_LINES_MAX} lines`, () => {
    expect(files.flatMap((f) => longFunctions(f, FUNCTION_LINES_MAX))).to.deep.equal([]);
  });

  it("the cluster layer is src/cluster/ with a folder per spec area, and src/dist/ does not exist", () => {
    expect(existsSync(join(SRC, "dist")), "src/dist").to.equal(false);
    for (const area of ["write", "read", "hints", "anti-entropy", "rebalance"]) expect(existsSync(join(SRC, "cluster", area)), `src/cluster/${area}`).to.equal(true);
  });
});
