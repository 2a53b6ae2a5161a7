// npm run cluster: a local 3-node cluster on loopback, each node seeded with the other two.
// Prints the endpoints, prefixes each node's log lines with its id, stops cleanly on Ctrl-C.
//
// Options: --nodes N (default 3), --base-port P (default 9100: node i uses P+10i, +1, +2 for
// api, mgmt and dist), any SERVICE_* variable in the environment is passed to every node.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../dist/src/main.js", import.meta.url));

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const count = option("nodes", 3);
const base = option("base-port", 9100);
const nodes = Array.from({ length: count }, (_, i) => ({
  id: `node-${i + 1}`,
  api: base + 10 * i,
  mgmt: base + 10 * i + 1,
  dist: base + 10 * i + 2,
}));

const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("SERVICE_") || k === "PATH")) as Record<string, string>;
const children: ChildProcess[] = nodes.map((n) => {
  const seeds = nodes.filter((o) => o !== n).map((o) => `${o.id}@127.0.0.1:${o.dist}`).join(",");
  const child = spawn(process.execPath, [BIN], {
    env: {
      ...inherited,
      SERVICE_NODE_ID: n.id,
      SERVICE_API_ADDR: `127.0.0.1:${n.api}`,
      SERVICE_MGMT_ADDR: `127.0.0.1:${n.mgmt}`,
      SERVICE_DIST_ADDR: `127.0.0.1:${n.dist}`,
      SERVICE_SEEDS: seeds,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    let buf = "";
    stream?.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) process.stdout.write(`[${n.id}] ${l}\n`);
    });
  }
  child.on("exit", (code, signal) => process.stdout.write(`[${n.id}] exited (${code ?? signal})\n`));
  return child;
});

process.stdout.write(`\nlocal cluster of ${count} nodes:\n`);
for (const n of nodes) {
  process.stdout.write(`  ${n.id}: client http://127.0.0.1:${n.api}  management http://127.0.0.1:${n.mgmt}  dist 127.0.0.1:${n.dist}\n`);
}
process.stdout.write(`try: curl -X PUT --data-binary hello http://127.0.0.1:${nodes[0]?.api}/v1/cache/greeting\n`);
process.stdout.write(`     curl http://127.0.0.1:${nodes[count - 1]?.api}/v1/cache/greeting\n`);
process.stdout.write("Ctrl-C stops every node cleanly.\n\n");

let stopping = false;
const stop = () => {
  if (stopping) {
    for (const c of children) c.kill("SIGKILL");
    process.exit(130);
  }
  stopping = true;
  process.stdout.write("\nstopping the cluster (Ctrl-C again to kill)...\n");
  let left = children.length;
  for (const c of children) {
    if (c.exitCode !== null) left--;
    else {
      c.once("exit", () => {
        if (--left === 0) process.exit(0);
      });
      c.kill("SIGTERM");
    }
  }
  if (left === 0) process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
