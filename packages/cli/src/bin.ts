// The hypercache command: runs main() on the process's streams and exits with its code. The
// installed command is bin/hypercache.js, which loads this file with V8's memory flags.
import { main } from "./main.js";
import { exitOnStdoutError, ignoreWriteErrors, processIo } from "./io.js";

const stdoutFailed = exitOnStdoutError(process.stdout, process.stderr, (c) => process.exit(c));
ignoreWriteErrors(process.stderr);
const code = await main(process.argv.slice(2), processIo());
// Let stdout drain (a pipe may still hold output), then exit even if a socket lingers.
process.stdout.write("", (err) => (err ? stdoutFailed(err) : process.exit(code)));
