// Key commands: get, set, del, keys, owners, me (incr and touch: updates.ts).
import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import type { CacheItem, Consistency } from "@hypercache/client/node";
import { EXIT, KeyMissingError, UsageError } from "../exit-codes.js";
import type { Runner } from "../main.js";
import type { Io } from "../io.js";

const CONSISTENCY = ["one", "quorum", "all"];
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function consistency(value: string | undefined): Consistency | undefined {
  if (value === undefined) return undefined;
  if (!CONSISTENCY.includes(value)) throw new UsageError(`--consistency: expected one, quorum or all, got ${JSON.stringify(value)}`);
  return value as Consistency;
}

/**
 * A key from the command line. Node decodes argv as UTF-8 and puts U+FFFD in place of bytes that
 * are not UTF-8, so different byte keys would silently become one key: a key argument holding
 * U+FFFD (such bytes, or the replacement character itself: the two cannot be told apart) is
 * refused. `load` takes any key, as a JSON string.
 */
export function keyArgument(key: string): string {
  if (key.includes("\uFFFD")) {
    throw new UsageError(`the key argument ${JSON.stringify(key)} holds U+FFFD: bytes that are not UTF-8 (turned into U+FFFD on the command line) or the replacement character itself; a key must be UTF-8 text, and a key with U+FFFD can be given to \`load\` as an escaped JSON string ("\\ufffd")`);
  }
  return key;
}

/** A control character: C0, DEL or C1 (a terminal acts on ESC, CSI and OSC sequences). */
function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/**
 * The value as text when it is UTF-8 without control characters (tab and newline aside; C1
 * included, as for keys: U+009B is a CSI to a terminal), else undefined: on a terminal `get`
 * then prints a note instead of the bytes, and JSON gives the value as base64.
 */
export function printableText(bytes: Uint8Array): string | undefined {
  try {
    const text = utf8.decode(bytes);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (isControl(c) && c !== 0x09 && c !== 0x0a) return undefined;
    }
    return text;
  } catch {
    return undefined;
  }
}

/**
 * Text from the server (a key) for a terminal line: as it is, or, when it holds a control
 * character, as a JSON string with every control character escaped, so a key cannot retitle,
 * clear or otherwise drive the operator's terminal (JSON output keeps it as it is).
 */
export function terminalSafe(text: string): string {
  let control = false;
  for (let i = 0; i < text.length && !control; i++) control = isControl(text.charCodeAt(i));
  if (!control) return text;
  // JSON escapes C0 and leaves DEL and C1 as they are.
  return JSON.stringify(text).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function itemJson(item: CacheItem) {
  const text = printableText(item.value);
  return {
    key: item.key,
    value: text ?? Buffer.from(item.value).toString("base64"),
    value_encoding: text === undefined ? "base64" : "utf8",
    bytes: item.value.length,
    version: item.version,
    origin: item.origin,
    last_updated: item.lastUpdated,
    ...(item.ttlMs !== undefined ? { ttl_ms: item.ttlMs } : {}),
    ...(item.expiresAt !== undefined ? { expires_at: item.expiresAt } : {}),
    node: item.node,
    owners: item.owners,
    ...(item.etag !== undefined ? { etag: item.etag } : {}),
  };
}

/**
 * The ETags of an --if-match: `*`, or a comma-separated list of tags, each with its quotes
 * (`'"lx3k2b1c0-n1"'`, as `get` prints it) or without them (the shell ate them): quoted then. A
 * weak `W/` tag never matches, so it is a usage error rather than a certain exit 7.
 */
export function etagArgument(flag: string, value: string): string | string[] {
  const v = value.trim();
  if (v === "*") return v;
  const tags = v.split(",").map((t) => t.trim());
  for (const t of tags) {
    if (t === "" || t === "*") throw new UsageError(`${flag}: expected * or ETags as \`get\` prints them, separated by commas, got ${JSON.stringify(value)}`);
    if (t.startsWith("W/")) throw new UsageError(`${flag}: ${t} is a weak ETag, which never matches: give the ETag \`get\` prints`);
  }
  return tags.map((t) => (t.startsWith('"') ? t : `"${t}"`));
}

/** The error of a missing key, naming the endpoint that answered. */
function notFound(key: string, endpoint: string | undefined): KeyMissingError {
  return new KeyMissingError({ status: 404, code: "NOT_FOUND", message: `no such key ${JSON.stringify(key)}`, endpoint: endpoint ?? "?" });
}

async function readAll(io: Io): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(chunks);
}

export function registerDataCommands(program: Command, run: Runner): void {
  registerValueCommands(program, run);
  registerKeyCommands(program, run);
}

/** get, set and del. */
function registerValueCommands(program: Command, run: Runner): void {
  program
    .command("get <key>")
    .description("read a value: its text on a terminal, the item as JSON otherwise; --out writes the exact bytes")
    .option("-o, --out <file>", "write the value's bytes to a file ('-' for stdout)")
    .option("--consistency <level>", "one, quorum or all")
    .action(
      run<{ out?: string; consistency?: string }>(async ({ client, out, io, opts }, keyArg) => {
        const key = keyArgument(keyArg);
        const c = consistency(opts.consistency);
        if (opts.out !== undefined) {
          const bytes = await client.get(key, { consistency: c });
          if (!bytes) throw notFound(key, client.currentEndpoint());
          if (opts.out === "-") io.stdout.write(bytes);
          else {
            await writeFile(opts.out, bytes).catch((e: Error) => Promise.reject(new UsageError(`--out ${opts.out}: ${e.message}`)));
            out.note(`wrote ${bytes.length} bytes to ${opts.out}`);
          }
          return EXIT.OK;
        }
        const item = await client.getItem(key, { consistency: c });
        if (!item) throw notFound(key, client.currentEndpoint());
        out.result(itemJson(item), () => printableText(item.value) ?? out.color.dim(`(${item.value.length} bytes of binary data: use --out FILE)`));
        return EXIT.OK;
      }),
    );

  program
    .command("set <key> [value]")
    .description("store a value: the argument, --file, or standard input")
    .option("-f, --file <file>", "store the file's bytes")
    .option("--ttl <duration>", "time to live, such as 30s, 5m or 1h30m")
    .option("--consistency <level>", "one, quorum or all")
    .option("--if-match <etag>", "store only if the item's ETag is this one (or * : if it exists); exit code 7 otherwise")
    .option("--if-none-match", "store only if the key holds no live item; exit code 7 otherwise")
    .action(
      run<{ file?: string; ttl?: string; consistency?: string; ifMatch?: string; ifNoneMatch?: boolean }>(async ({ client, out, io, opts }, keyArg, value) => {
        const key = keyArgument(keyArg);
        if (value !== undefined && opts.file !== undefined) throw new UsageError("give the value or --file, not both");
        let body: string | Uint8Array;
        if (value !== undefined) body = value;
        else if (opts.file !== undefined) body = await readFile(opts.file).catch((e: Error) => Promise.reject(new UsageError(`--file ${opts.file}: ${e.message}`)));
        else if (!io.stdin.isTTY) body = await readAll(io);
        else throw new UsageError("set needs a value, --file FILE, or data on standard input");
        const conditions = {
          ...(opts.ifMatch !== undefined ? { ifMatch: etagArgument("--if-match", opts.ifMatch) } : {}),
          ...(opts.ifNoneMatch === true ? { ifNoneMatch: "*" as const } : {}),
        };
        const r = await client.set(key, body, { ...(opts.ttl !== undefined ? { ttl: opts.ttl } : {}), consistency: consistency(opts.consistency), ...conditions });
        out.result(r, () => `${out.color.green("stored")} ${terminalSafe(r.key)} (${r.bytes} bytes) via ${r.node}, owners ${r.owners.join(", ")}${r.etag !== undefined ? `, ETag ${r.etag}` : ""}`);
        return EXIT.OK;
      }),
    );

  program
    .command("del <key>")
    .alias("delete")
    .description("delete a key (exit code 3 when it did not exist, unless a lost attempt may have deleted it)")
    .option("--consistency <level>", "one, quorum or all")
    .option("--if-match <etag>", "delete only if the item's ETag is this one (or * : if it exists); exit code 7 otherwise")
    .action(
      run<{ consistency?: string; ifMatch?: string }>(async ({ client, out, opts }, keyArg) => {
        const key = keyArgument(keyArg);
        const ifMatch = opts.ifMatch === undefined ? {} : { ifMatch: etagArgument("--if-match", opts.ifMatch) };
        const r = await client.delete(key, { consistency: consistency(opts.consistency), ...ifMatch });
        out.result(r, () => (r.deleted ? `${out.color.green("deleted")} ${terminalSafe(r.key)} (${r.bytes} bytes)` : `${terminalSafe(r.key)} did not exist`));
        if (r.deleted) return EXIT.OK;
        // A replay after an attempt that may have reached a node: that attempt may be what deleted
        // the key. It is gone either way, which is what del asked for.
        if (r.replayed) {
          out.note(`hypercache: key ${JSON.stringify(r.key)} is gone; an earlier attempt may have deleted it (its answer was lost, and the replay on ${r.node} found nothing)`);
          return EXIT.OK;
        }
        out.note(`hypercache: key ${JSON.stringify(r.key)} did not exist (answered by ${r.node}); nothing deleted`);
        return EXIT.NOT_FOUND;
      }),
    );

}

/** keys, owners and me. */
function registerKeyCommands(program: Command, run: Runner): void {
  program
    .command("keys [pattern]")
    .description("list the keys of the whole cluster: a prefix, or a glob with * ? [..] (exit code 6 when some node did not answer)")
    .option("--max <n>", "cap of the result set (server default 10000, ceiling 50000)")
    .action(
      run<{ max?: string }>(async ({ client, out, opts }, pattern) => {
        const max = opts.max === undefined ? undefined : Number(opts.max);
        if (max !== undefined && !(Number.isInteger(max) && max > 0)) throw new UsageError(`--max: expected a positive integer, got ${JSON.stringify(opts.max)}`);
        const it = client.keys({ ...(pattern ? { q: pattern } : {}), ...(max ? { max } : {}) });
        const keys: string[] = [];
        for await (const k of it) {
          if (out.json) keys.push(k);
          else out.line(terminalSafe(k));
        }
        const partial = it.partialNodes;
        if (out.json) out.result({ keys, count: keys.length, truncated: it.truncated, partial_nodes: partial }, () => "");
        else out.note(out.color.dim(`${it.totalMatched ?? 0} keys${it.truncated ? " (truncated by --max)" : ""}`));
        if (partial.length > 0) {
          out.note(`hypercache: partial result: no listing from ${partial.join(", ")} (hint: their keys may be missing; check \`hypercache members\`)`);
          return EXIT.PARTIAL;
        }
        return EXIT.OK;
      }),
    );

  program
    .command("owners <key>")
    .description("the key's owner nodes, primary first")
    .action(
      run(async ({ client, out }, keyArg) => {
        const key = keyArgument(keyArg);
        const owners = await client.owners(key);
        out.result({ key, owners }, () => owners.map((o, i) => (i === 0 ? `${out.color.bold(o)} (primary)` : o)).join("\n"));
        return EXIT.OK;
      }),
    );

  program
    .command("me")
    .description("who the credentials identify: id, scopes, capabilities")
    .action(
      run(async ({ client, out }) => {
        const me = await client.me();
        out.result(me, () => `${out.color.bold(me.id)}\nscopes: ${me.scopes.join(" ") || "(none)"}\ncapabilities: ${me.capabilities.join(" ") || "(none)"}`);
        return EXIT.OK;
      }),
    );
}
