// `npm run package` output (the image's /app): assembled once into a temporary folder outside the
// repository, so that nothing can be resolved from the checkout's node_modules, then started as
// the image starts it: `node dist/src/main.js` with only SERVICE_* variables (and PATH).
import { expect } from "chai";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePorts } from "../helpers/ports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STOP_TIMEOUT_MS = 15_000;

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
}

describe("npm run package (build/image-root, the image's /app)", function () {
  this.timeout(180_000);
  let work = "";
  let out = "";

  before(function () {
    if (!existsSync(join(ROOT, "dist", "src", "main.js"))) {
      const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: "ignore" });
      if (build.status !== 0) throw new Error("npm run build failed");
    }
    work = mkdtempSync(join(tmpdir(), "hypercache-image-"));
    out = join(work, "app");
    const r = spawnSync(process.execPath, [join(ROOT, "scripts", "package-image-root.mjs"), "--out", out], { cwd: ROOT, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`package failed: ${r.stdout}${r.stderr}`);
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("holds dist/, package.json, the OpenAPI files and nothing from the sources or tests", () => {
    expect(readdirSync(out).sort()).to.deep.equal(["dist", "node_modules", "openapi", "package-lock.json", "package.json"]);
    expect(readdirSync(join(out, "dist")).sort()).to.deep.equal(["dashboard", "gen", "src"]);
    expect(readdirSync(join(out, "dist", "dashboard")).sort()).to.deep.equal(["assets", "index.html"]);
    expect(readdirSync(join(out, "openapi")).sort()).to.deep.equal(["client.yaml", "management.yaml"]);
    expect((JSON.parse(readFileSync(join(out, "package.json"), "utf8")) as { name: string }).name).to.equal("hypercache-server");
    const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [e.name]));
    const files = walk(join(out, "dist"));
    expect(files).to.include("main.js");
    expect(files.filter((f) => /\.(ts|map)$/.test(f) && !f.endsWith(".d.ts"))).to.deep.equal([]);
  });

  it("has the production dependencies and none of the dev-only ones", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const name of Object.keys(pkg.dependencies)) expect(existsSync(join(out, "node_modules", name)), name).to.equal(true);
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
    const devOnly = Object.entries(lock.packages).filter(([path, e]) => path.startsWith("node_modules/") && e.dev === true);
    expect(devOnly.length).to.be.greaterThan(0);
    for (const [path] of devOnly) expect(existsSync(join(out, path)), path).to.equal(false);
  });

  it("holds the file the Dockerfile's CMD starts", () => {
    const cmd = /^CMD \["\/app\/([^"]+)"\]$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    expect(cmd, "CMD [\"/app/...\"]").to.not.equal(null);
    expect(existsSync(join(out, cmd![1]!))).to.equal(true);
  });

  it("starts with only SERVICE_* variables, answers /healthz and exits 0 on SIGTERM", async () => {
    const [api, mgmt, dist] = await freePorts(3);
    const env = {
      PATH: process.env.PATH ?? "",
      SERVICE_NODE_ID: "image-1",
      SERVICE_API_ADDR: `127.0.0.1:${api}`,
      SERVICE_MGMT_ADDR: `127.0.0.1:${mgmt}`,
      SERVICE_DIST_ADDR: `127.0.0.1:${dist}`,
    };
    const child = spawn(process.execPath, ["dist/src/main.js"], { cwd: out, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
    try {
      let status = 0;
      let body = "";
      for (let i = 0; i < 100 && status !== 200; i++) {
        try {
          const r = await fetch(`http://127.0.0.1:${api}/healthz`);
          status = r.status;
          body = await r.text();
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(status, output).to.equal(200);
      expect(JSON.parse(body)).to.include({ status: "ok", node: "image-1" });
      const page = await fetch(`http://127.0.0.1:${mgmt}/dashboard/`);
      expect(page.status, "the image serves the dashboard").to.equal(200);
      expect(await page.text()).to.include("hypercache dashboard");
    } finally {
      child.kill("SIGTERM");
    }
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("timeout"), STOP_TIMEOUT_MS).unref());
    const code = await Promise.race([exited, timeout]);
    if (code === "timeout") child.kill("SIGKILL");
    expect(code, output).to.equal(0);
    expect(output).to.contain("hypercache-server stopped cleanly");
  });
});
