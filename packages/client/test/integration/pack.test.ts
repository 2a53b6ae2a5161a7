// The published shape of @hypercache/client: `npm pack`, installed into a fresh project, type-checks
// with tsc --noEmit through both entries (and tsc does reject a wrong call, so the check is real).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const pkgDir = fileURLToPath(new URL("../..", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));
const tsc = join(repoRoot, "node_modules", ".bin", "tsc");

const USAGE = `
import { HypercacheClient, NotFoundError, AllEndpointsFailedError, type ClientOptions, type CacheItem } from "@hypercache/client";
import { HypercacheClient as NodeClient, createNodeFetch, type NodeClientOptions } from "@hypercache/client/node";

const options: ClientOptions = { endpoints: ["https://cache-1:8080"], token: async () => "t", discovery: { intervalMs: 10_000 } };
const browser = new HypercacheClient(options);
const nodeOptions: NodeClientOptions = { ...options, tls: { ca: "pem", cert: "pem", key: "pem" } };
const node = new NodeClient(nodeOptions);

export async function use(): Promise<void> {
  const bytes: Uint8Array | undefined = await node.get("k", { consistency: "quorum" });
  const item: CacheItem | undefined = await browser.getItem("k");
  const json = await node.getJSON<{ a: number }>("k");
  await node.set("k", bytes ?? "text", { ttl: "30s" });
  const results = await node.setMany([{ key: "a", value: "v", ttl: 1000 }]);
  for await (const key of node.keys({ q: "user:*" })) void key;
  for await (const e of await node.watch()) if (e.type === "members") void e.data.members.length;
  try {
    await node.delete("k");
  } catch (err) {
    if (err instanceof NotFoundError) void err.endpoint;
    if (err instanceof AllEndpointsFailedError) void err.attempts.length;
  }
  const { agent } = createNodeFetch({ connections: 8 });
  await agent.close();
  await node.close();
  void item?.version, json?.a, results[0]?.stored;
}
`;

describe("@hypercache/client npm package", function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "hypercache-pack-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("packs, installs into a temporary project and compiles there with tsc --noEmit", () => {
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })) as { filename: string; files: { path: string }[] }[];
    const files = packed[0]?.files.map((f) => f.path) ?? [];
    expect(files).to.include.members(["dist/index.js", "dist/index.d.ts", "dist/node.js", "dist/node.d.ts", "dist/browser/hypercache-client.min.js", "package.json", "README.md"]);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/")), "no sources or tests shipped").to.deep.equal([]);

    const project = join(dir, "app");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    const install = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", join(dir, packed[0]?.filename as string)], { cwd: project, encoding: "utf8" });
    expect(install.status, install.stderr).to.equal(0);
    mkdirSync(join(project, "node_modules", "@types"), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules", "@types", "node"), join(project, "node_modules", "@types", "node"));
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", lib: ["ES2023", "DOM"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, types: ["node"] }, include: ["*.ts"] }));
    writeFileSync(join(project, "use.ts"), USAGE);
    const ok = spawnSync(tsc, ["-p", project], { encoding: "utf8" });
    expect(ok.status, ok.stdout + ok.stderr).to.equal(0);

    writeFileSync(join(project, "wrong.ts"), `import { HypercacheClient } from "@hypercache/client";\nnew HypercacheClient({ endpoints: ["http://x"] }).set("k", 42);\n`);
    const wrong = spawnSync(tsc, ["-p", project], { encoding: "utf8" });
    expect(wrong.status).to.not.equal(0);
    expect(wrong.stdout).to.match(/wrong\.ts.*TS2345/);
  });
});
