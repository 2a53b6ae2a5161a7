#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=128
// The hypercache command: runs main() on the process's streams and exits with its code.
// The V8 flags bound memory: a `load` of any size stays near 120 MB of RSS (bench/sdk.ts). Live
// data is a few batches; without them V8's lazy collection lets the heap grow past 150 MB.
import { main } from "./main.js";
import { processIo } from "./io.js";

const code = await main(process.argv.slice(2), processIo());
// Let stdout drain (a pipe may still hold output), then exit even if a socket lingers.
process.stdout.write("", () => process.exit(code));
