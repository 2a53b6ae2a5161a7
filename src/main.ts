#!/usr/bin/env node
// The process entry. Stop signals are caught first, before the server's modules load: a process
// that is PID 1 (the container image runs node directly) ignores a signal it has no handler for,
// and loading the server (Koa, Connect, protobuf, OpenTelemetry, winston...) takes about 250 ms,
// more on a throttled pod. A review sent SIGTERM 50 ms after start to node as PID 1: it was lost,
// and the node booted and served until it was killed. This module imports nothing else
// statically (test/unit/process/entry.test.ts holds it to that).
import { BootSignals } from "./boot-signals.js";

const boot = new BootSignals((signal, code) => {
  // Before the server set its logger (boot.exitWith): nothing exists yet to hand off.
  process.stderr.write(`hypercache-server: ${signal} while starting: exiting\n`);
  process.exit(code);
}, process);

try {
  const { runServer } = await import("./server.js");
  await runServer(boot);
} catch (err) {
  process.stderr.write(`hypercache-server: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
