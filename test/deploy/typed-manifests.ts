// Writes rendered objects as typed TypeScript constants (`const x: IStatefulSet = {...}`) and
// type-checks them with tsc: excess-property checks catch misspelt fields such as
// `periodSecond`, which kubernetes-models' validate() accepts as unknown fields.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { K8sObject } from "./k8s-rules.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** The kubernetes-models module that types an object: `kubernetes-models/<apiVersion>`. */
export function modelModule(o: K8sObject): string {
  return `kubernetes-models/${o.apiVersion}`;
}

export function typedSource(objects: readonly K8sObject[]): string {
  const imports = new Map<string, Set<string>>();
  const consts: string[] = [];
  objects.forEach((o, i) => {
    const mod = modelModule(o);
    if (!imports.has(mod)) imports.set(mod, new Set());
    imports.get(mod)!.add(`I${o.kind}`);
    consts.push(`// ${o.kind} ${o.metadata.name}\nexport const object${i}: I${o.kind} = ${JSON.stringify(o, null, 2)};\n`);
  });
  const head = [...imports].map(([mod, names]) => `import type { ${[...names].sort().join(", ")} } from "${mod}";`);
  return `${head.join("\n")}\n\n${consts.join("\n")}`;
}

/** A field misspelt on purpose: tsc must reject it, or the typed check has no teeth. */
const CANARY = `import type { IProbe } from "kubernetes-models/v1";
export const canary: IProbe = {
  httpGet: { path: "/livez", port: "mgmt" },
  // @ts-expect-error periodSecond is not a Probe field: tsc must flag it
  periodSecond: 10,
};
`;

export interface TypeCheck {
  dir: string;
  ok: boolean;
  output: string;
}

/** One file per named set of objects, plus the canary, checked by one tsc run (under .tmp/ so that node_modules resolves). */
export function typeCheck(sets: ReadonlyArray<{ name: string; objects: readonly K8sObject[] }>): TypeCheck {
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".tmp", "k8s-typed-"));
  const files = ["canary.ts"];
  writeFileSync(join(dir, "canary.ts"), CANARY);
  sets.forEach((s, i) => {
    const file = `manifests-${i}-${s.name.replace(/[^a-z0-9]+/gi, "-")}.ts`;
    files.push(file);
    writeFileSync(join(dir, file), typedSource(s.objects));
  });
  const tsconfig = {
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] },
    files,
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  const r = spawnSync(process.execPath, [TSC, "-p", join(dir, "tsconfig.json")], { cwd: dir, encoding: "utf8" });
  return { dir, ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}
