import { expect } from "chai";
import { build } from "esbuild";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../../src/browser.ts", import.meta.url));
const nodeEntry = fileURLToPath(new URL("../../src/node.ts", import.meta.url));

async function bundle(file: string) {
  return build({ entryPoints: [file], bundle: true, format: "esm", platform: "browser", minify: true, write: false, logLevel: "silent", metafile: true });
}

describe("client browser build", () => {
  it("bundles the browser entry, with no Node built-in, no undici and no OAuth client credentials, within 20 KB gzip", async () => {
    const out = await bundle(entry);
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((p) => p.includes("undici") || p.startsWith("node:"))).to.deep.equal([]);
    expect(inputs.filter((p) => p.includes("oidc")), "no OAuth client credentials: a page cannot keep a client secret").to.deep.equal([]);
    const gz = gzipSync(out.outputFiles[0]?.contents ?? new Uint8Array(), { level: 9 }).length;
    expect(gz).to.be.greaterThan(2_000).and.at.most(20 * 1024);
  });

  it("cannot bundle the Node entry for browsers (the check above would catch a Node import in the core)", async () => {
    const err = await bundle(nodeEntry).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error).and.have.property("message").that.match(/node:stream|Could not resolve/);
  });
});
