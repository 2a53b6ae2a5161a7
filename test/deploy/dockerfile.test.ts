// The Dockerfile, checked without a Docker engine: dockerfilelint, and its structure through
// dockerfile-ast (base images, non-root runtime, npm ci from the lockfile, no secrets, ports).
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DockerfileParser, type Dockerfile, type Instruction } from "dockerfile-ast";
import dockerfilelint from "dockerfilelint";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TEXT = readFileSync(`${ROOT}/Dockerfile`, "utf8");
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_?KEY|AUTH/i;
const BUILD_IMAGE = /^node:20\.\d+\.\d+-bookworm-slim$/;
const RUNTIME_IMAGE = "gcr.io/distroless/nodejs20-debian12:nonroot";

interface Stage {
  from: string;
  name: string | null;
  instructions: Instruction[];
}

function stages(df: Dockerfile): Stage[] {
  const out: Stage[] = [];
  for (const ins of df.getInstructions()) {
    if (ins.getKeyword() === "FROM") {
      const from = df.getFROMs().find((f) => f.getRange().start.line === ins.getRange().start.line)!;
      out.push({ from: from.getImage() ?? "", name: from.getBuildStage(), instructions: [] });
    } else out.at(-1)?.instructions.push(ins);
  }
  return out;
}

const keyword = (s: Stage, k: string) => s.instructions.filter((i) => i.getKeyword() === k);
const args = (i: Instruction) => i.getArguments().map((a) => a.getValue());

/** Default ports of the listeners, read from the README's configuration table. */
function defaultPorts(): number[] {
  const readme = readFileSync(`${ROOT}/README.md`, "utf8");
  return ["SERVICE_API_ADDR", "SERVICE_MGMT_ADDR", "SERVICE_DIST_ADDR"].map((name) => {
    const m = new RegExp(`\\| \`${name}\` \\| \`:(\\d+)\` \\|`).exec(readme);
    if (!m) throw new Error(`README has no default for ${name}`);
    return Number(m[1]);
  });
}

describe("Dockerfile", () => {
  const df = DockerfileParser.parse(TEXT);
  const [build, runtime, ...more] = stages(df);

  it("passes dockerfilelint", () => {
    expect(dockerfilelint.run(ROOT, TEXT)).to.deep.equal([]);
  });

  it("has two stages: node 20 bookworm-slim at an exact version, then distroless Node 20 nonroot", () => {
    expect(more).to.deep.equal([]);
    expect(build?.from).to.match(BUILD_IMAGE);
    expect(runtime?.from).to.equal(RUNTIME_IMAGE);
  });

  it("never uses a latest or missing tag", () => {
    for (const f of df.getFROMs()) {
      if (f.getImageName() === build?.name) continue;
      expect(f.getImageTag(), f.getImage() ?? "").to.be.a("string").and.not.equal("latest");
    }
  });

  it("installs with npm ci after copying the manifest and lockfile, before any source", () => {
    const ins = build!.instructions;
    const lockCopy = ins.findIndex((i) => i.getKeyword() === "COPY" && args(i).includes("package-lock.json"));
    const npmCi = ins.findIndex((i) => i.getKeyword() === "RUN" && /\bnpm ci\b/.test(i.getArgumentsContent() ?? ""));
    // The workspaces' sources count too: before, COPY packages/ came before npm ci, so an edit of
    // the SDK or the CLI installed every dependency again. Only their manifests come first.
    const firstSource = ins.findIndex((i) => i.getKeyword() === "COPY" && args(i).some((a) => /^(src|gen|openapi|scripts|packages)\/?$/.test(a)));
    const manifests = ins.filter((i) => i.getKeyword() === "COPY" && args(i).some((a) => /^packages\/[^/]+\/package\.json$/.test(a)));
    expect(manifests.map((i) => args(i)[0]).sort(), "each workspace's manifest").to.deep.equal(["packages/cli/package.json", "packages/client/package.json"]);
    for (const m of manifests) expect(ins.indexOf(m), String(args(m))).to.be.below(npmCi);
    const pack = ins.findIndex((i) => i.getKeyword() === "RUN" && /\bnpm run package\b/.test(i.getArgumentsContent() ?? ""));
    expect(lockCopy, "COPY package-lock.json").to.be.at.least(0);
    expect(args(ins[lockCopy]!), "manifest copied with the lockfile").to.include("package.json");
    expect(npmCi, "RUN npm ci").to.be.greaterThan(lockCopy);
    expect(firstSource, "sources copied after npm ci").to.be.greaterThan(npmCi);
    expect(pack, "RUN npm run package after the sources").to.be.greaterThan(firstSource);
    expect(keyword(build!, "RUN").map((i) => i.getArgumentsContent()).join("\n")).to.not.match(/npm (install|i)\b/);
  });

  it("copies only build/image-root from the build stage into the runtime", () => {
    const copies = keyword(runtime!, "COPY").concat(keyword(runtime!, "ADD"));
    expect(copies).to.have.length(1);
    const from = df.getCOPYs().find((c) => c.getRange().start.line === copies[0]!.getRange().start.line)?.getFromFlag()?.getValue();
    expect(from).to.equal(build!.name);
    expect(args(copies[0]!).filter((a) => !a.startsWith("--"))[0]).to.match(/\/build\/image-root\/?$/);
    expect(keyword(runtime!, "RUN"), "the distroless runtime has no shell to RUN with").to.deep.equal([]);
  });

  it("runs as uid 65532, not root", () => {
    const users = keyword(runtime!, "USER").map((i) => i.getArgumentsContent());
    expect(users.at(-1)).to.match(/^65532(:65532)?$/);
  });

  it("puts no secret in ENV or ARG", () => {
    for (const i of [...df.getENVs(), ...df.getARGs()]) {
      for (const p of i.getProperties()) expect(p.getName(), `${i.getKeyword()} ${p.getName()}`).to.not.match(SECRET_NAME);
    }
    expect(TEXT).to.not.match(/SERVICE_(AUTH_TOKEN|PEER_TOKEN)/);
  });

  it("exposes the default client, management and peer ports", () => {
    const exposed = keyword(runtime!, "EXPOSE").flatMap(args).map((p) => Number(p.replace(/\/tcp$/, "")));
    expect(exposed).to.have.members(defaultPorts());
    expect(exposed).to.have.members([8080, 8081, 7946]);
  });

  it("stops with SIGTERM and starts dist/src/main.js in exec form, under tini as PID 1", () => {
    expect(keyword(runtime!, "STOPSIGNAL").map((i) => i.getArgumentsContent())).to.deep.equal(["SIGTERM"]);
    const cmd = df.getCMDs().at(-1);
    const entry = df.getENTRYPOINTs().at(-1);
    expect(cmd?.getJSONStrings().map((s) => s.getJSONValue())).to.deep.equal(["/app/dist/src/main.js"]);
    // Node as PID 1 ignores a signal that comes before its handlers (test/integration/boot-signals).
    expect(entry?.getJSONStrings().map((s) => s.getJSONValue())).to.deep.equal(["/app/tini", "--", "/nodejs/bin/node"]);
    const runs = keyword(build!, "RUN").map((i) => i.getArgumentsContent()).join("\n");
    expect(runs, "tini from Debian, its static build into the image root").to.match(/apt-get install -y --no-install-recommends tini[\s\S]*cp \/usr\/bin\/tini-static build\/image-root\/tini/);
  });

  it("sends the build only what it copies (.dockerignore allow-list)", () => {
    const lines = readFileSync(`${ROOT}/.dockerignore`, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
    expect(lines[0], "everything excluded first").to.equal("*");
    const allowed = lines.filter((l) => l.startsWith("!")).map((l) => l.slice(1).replace(/\/$/, ""));
    const sources = keyword(build!, "COPY").flatMap((i) => args(i).filter((a) => !a.startsWith("--")).slice(0, -1));
    // A source is allowed by name or by an allowed folder it sits in (packages/cli/package.json).
    for (const s of sources) {
      const path = s.replace(/\/$/, "");
      expect(allowed.some((a) => path === a || path.startsWith(`${a}/`)), `COPY ${s} (allowed: ${allowed.join(", ")})`).to.equal(true);
    }
    expect(allowed).to.not.include.members(["node_modules", "dist", "build", ".git", "tools"]);
  });
});
