// The hypercache command: runs main() on the process's streams and exits with its code. The
// installed command is bin/hypercache.js, which loads this file with V8's memory flags.
import { main } from "./main.js";
import { exitQuietlyOnEpipe, processIo } from "./io.js";

exitQuietlyOnEpipe(process.stdout, (c) => process.exit(c));
// A closed stderr loses the message, not the exit code.
exitQuietlyOnEpipe(process.stderr, () => undefined);
const code = await main(process.argv.slice(2), processIo());
// Let stdout drain (a pipe may still hold output), then exit even if a socket lingers.
process.stdout.write("", () => process.exit(code));
