// Compression bombs: gzip bodies that inflate far past every body limit. Deflate cannot do better
// than about 1:1030, so "10 KB that inflates to 1 GiB" is not possible in one gzip layer: the
// fuzzer sends a 10 KB body that inflates to 10 MiB and a 1 MB body that inflates to 1 GiB.
// Made once by streaming zeros through gzip, and cached in the temporary directory.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { constants, createGzip } from "node:zlib";

export interface Bomb {
  name: string;
  inflatedBytes: number;
  gzip: Buffer;
}

async function makeBomb(inflatedBytes: number): Promise<Buffer> {
  const gz = createGzip({ level: constants.Z_BEST_COMPRESSION });
  const parts: Buffer[] = [];
  gz.on("data", (d: Buffer) => parts.push(d));
  const done = new Promise<void>((resolve, reject) => {
    gz.on("end", resolve);
    gz.on("error", reject);
  });
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  // a JSON document that stays open: `{"items":[` then spaces (valid JSON whitespace) to the end
  gz.write(Buffer.from('{"items":['));
  for (let written = 0; written < inflatedBytes; written += chunk.length) {
    if (!gz.write(chunk)) await new Promise((r) => gz.once("drain", r));
  }
  gz.end();
  await done;
  return Buffer.concat(parts);
}

export async function bombs(): Promise<Bomb[]> {
  const out: Bomb[] = [];
  for (const [name, size] of [
    ["10MiB", 10 * 1024 * 1024],
    ["1GiB", 1024 * 1024 * 1024],
  ] as const) {
    const file = path.join(os.tmpdir(), `hypercache-fuzz-bomb-${name}.gz`);
    if (!existsSync(file)) writeFileSync(file, await makeBomb(size));
    out.push({ name, inflatedBytes: size, gzip: readFileSync(file) });
  }
  return out;
}
