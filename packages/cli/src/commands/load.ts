// load <file.jsonl>: streams batch-put items to the cluster. Lines are read only as fast as the
// batches are sent (at most --concurrency batches in flight), so memory stays flat for any file
// size. Bad lines are reported by number and skipped; items the cluster refused are written,
// line for line, to --errors-out, a file that can be loaded again. Ctrl-C stops reading, lets
// the batches in flight finish and prints the summary (a second Ctrl-C exits at once).
import { createReadStream, fstatSync, statSync, type Stats, type WriteStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { Command } from "commander";
import { AllEndpointsFailedError, BATCH_CHUNK_ITEMS, ttlToMs } from "@hypercache/client/node";
import { EXIT, exitCodeFor, UsageError } from "../exit-codes.js";
import type { Io } from "../io.js";
import type { Runner } from "../main.js";
import type { Output } from "../output.js";
import { BatchSender } from "../load/batch-sender.js";
import { parseLoadLine, readLines, untilAborted, type InputLine } from "../load/load-line.js";
import { startProgress, type LoadCounters, type Progress } from "../load/progress.js";

/** Batch calls in flight at once by default. */
export const LOAD_CONCURRENCY = 4;
/** Bad lines printed one by one; past this only the count is kept. */
export const BAD_LINES_SHOWN_MAX = 100;

function positiveInt(flag: string, text: string, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${flag}: expected an integer from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** --ttl in milliseconds, checked before the file is opened: a bad one is a usage error. */
function ttlFlag(text: string): number {
  try {
    return ttlToMs(text);
  } catch (err) {
    throw new UsageError(`--ttl: ${(err as Error).message}`);
  }
}

/** The input stream, and its size when it is a file (for the share read). */
function openInput(file: string, io: Io): { input: Readable; totalBytes: number | undefined } {
  if (file === "-") return { input: io.stdin, totalBytes: undefined };
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(file);
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  if (stat.isDirectory()) throw new UsageError(`${file} is a directory: load reads a JSON-lines file ('-' for standard input)`);
  return { input: createReadStream(file, { highWaterMark: 256 * 1024 }), totalBytes: stat.size };
}

/**
 * Refuses an --errors-out that is the input file itself (compared by device and inode, so another
 * path or a link to it counts): opening it for writing would empty the input before it is read.
 * Checked before either is opened. Standard input is compared when it is a file (`< file`).
 */
function refuseInputAsErrorsOut(file: string, errorsOut: string | undefined, io: Io): void {
  if (errorsOut === undefined) return;
  const stat = (get: () => Stats): Stats | undefined => {
    try {
      return get();
    } catch {
      return undefined; // a missing --errors-out cannot be the input; a missing input is openInput's to report
    }
  };
  const out = stat(() => statSync(errorsOut));
  const fd = (io.stdin as { fd?: unknown }).fd;
  const input = file !== "-" ? stat(() => statSync(file)) : typeof fd === "number" ? stat(() => fstatSync(fd)) : undefined;
  if (out === undefined || input === undefined || !input.isFile() || input.dev !== out.dev || input.ino !== out.ino) return;
  const what = file === "-" ? "standard input's file" : `the input file ${JSON.stringify(file)}`;
  throw new UsageError(`--errors-out ${JSON.stringify(errorsOut)} is ${what}: writing the failed lines there would empty it before it is read; name another file`);
}

/** The --errors-out file, opened before anything is read: a path that cannot be written is a usage error. */
async function openErrorsOut(path: string): Promise<{ stream: WriteStream; failure: () => Error | undefined }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "w");
  } catch (err) {
    throw new UsageError(`--errors-out: cannot write ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
  const stream = handle.createWriteStream();
  // A write that fails later (a full disk) is reported after the summary, never thrown as an 'error' event.
  let failed: Error | undefined;
  stream.on("error", (err) => (failed ??= err));
  return { stream, failure: () => failed };
}

/** Prints the summary (and the first failure) and answers the exit code. */
function finishLoad(r: { file: string; errorsOut: string | undefined; out: Output; c: LoadCounters; sender: BatchSender; interrupted: boolean; seconds: number }): number {
  const { out, c, interrupted, seconds } = r;
  const { firstFailure, failureCodes } = r.sender;
  const summary = {
    file: r.file,
    items: c.items,
    stored: c.stored,
    failed: c.failed,
    bad_lines: c.badLines,
    seconds: Math.round(seconds * 1000) / 1000,
    items_per_s: seconds > 0 ? Math.round(c.stored / seconds) : 0,
    interrupted,
    ...(r.errorsOut ? { errors_out: r.errorsOut } : {}),
  };
  out.result(summary, () => {
    const head = interrupted ? out.color.yellow("interrupted") : c.failed + c.badLines > 0 ? out.color.yellow("done with problems") : out.color.green("done");
    const tail = c.failed > 0 && r.errorsOut ? ` (failed lines in ${r.errorsOut})` : "";
    return `${head}: ${c.stored} of ${c.items} items stored in ${summary.seconds} s (${summary.items_per_s} items/s), ${c.failed} failed, ${c.badLines} bad lines${tail}`;
  });
  if (firstFailure) out.note(`hypercache: first failure: ${firstFailure.message}`);
  if (interrupted) return EXIT.INTERRUPTED;
  if (c.failed === 0 && c.badLines === 0) return EXIT.OK;
  // Nothing stored and every failure of one kind (all endpoints down, credentials refused): that kind's code.
  if (c.stored === 0 && c.badLines === 0 && failureCodes.size === 1 && firstFailure && (firstFailure instanceof AllEndpointsFailedError || exitCodeFor(firstFailure) === EXIT.AUTH)) return exitCodeFor(firstFailure);
  return EXIT.PARTIAL;
}

/** Parses the lines and hands their items to the sender until the input ends or the load is interrupted. */
async function sendLines(lines: AsyncIterable<InputLine>, r: { c: LoadCounters; sender: BatchSender; progress: Progress; defaultTtl: number | undefined; interrupted: () => boolean }): Promise<void> {
  const { c, progress, defaultTtl } = r;
  let lineNo = 0;
  const badLine = (error: string) => {
    c.badLines++;
    if (c.badLines <= BAD_LINES_SHOWN_MAX) progress.log(`hypercache: line ${lineNo}: ${error}`);
    else if (c.badLines === BAD_LINES_SHOWN_MAX + 1) progress.log("hypercache: more bad lines: only their count is kept");
  };
  for await (const line of lines) {
    if (r.interrupted()) break;
    lineNo++;
    if ("error" in line) {
      badLine(line.error);
      continue;
    }
    const parsed = parseLoadLine(line.text);
    if ("blank" in parsed) continue;
    if ("error" in parsed) {
      badLine(parsed.error);
      continue;
    }
    c.items++;
    await r.sender.add(parsed.item.ttl === undefined && defaultTtl !== undefined ? { ...parsed.item, ttl: defaultTtl } : parsed.item, line.text);
  }
}

interface LoadOptions {
  errorsOut?: string;
  batchSize: string;
  concurrency: string;
  ttl?: string;
}

export function registerLoadCommand(program: Command, run: Runner): void {
  program
    .command("load <file>")
    .description("bulk-load a JSON-lines file ('-' for standard input) of {key, value, ttl_ms?, ttl?, value_encoding?} items")
    .option("--errors-out <file>", "write the lines whose items failed to this file (it can be loaded again)")
    .option("--batch-size <n>", "items per batch call (at most 1000)", String(BATCH_CHUNK_ITEMS))
    .option("--concurrency <n>", "batch calls in flight at once", String(LOAD_CONCURRENCY))
    .option("--ttl <duration>", "time to live of items that name none, such as 1h")
    .action(
      run<LoadOptions>(async ({ client, out, io, opts }, file) => {
        const batchSize = positiveInt("--batch-size", opts.batchSize, BATCH_CHUNK_ITEMS);
        const concurrency = positiveInt("--concurrency", opts.concurrency, 64);
        const defaultTtl = opts.ttl === undefined ? undefined : ttlFlag(opts.ttl);
        refuseInputAsErrorsOut(file as string, opts.errorsOut, io);
        const { input, totalBytes } = openInput(file as string, io);
        let failedLines: Awaited<ReturnType<typeof openErrorsOut>> | undefined;
        try {
          failedLines = opts.errorsOut ? await openErrorsOut(opts.errorsOut) : undefined;
        } catch (err) {
          if ("destroy" in input) input.destroy();
          throw err;
        }
        const errorsOut = failedLines?.stream;
        const started = io.now();
        const c: LoadCounters = { bytes: 0, items: 0, stored: 0, failed: 0, badLines: 0 };
        const progress = startProgress(io, c, totalBytes, started);
        let interrupted = false;
        // Ctrl-C stops the reading at once, even while the input is quiet (`load -` from an idle producer).
        const reading = new AbortController();
        const stopInterrupt = io.onInterrupt(() => {
          if (interrupted) io.exitNow(EXIT.INTERRUPTED);
          interrupted = true;
          reading.abort();
          progress.log("hypercache: interrupted: finishing the batches in flight (Ctrl-C again to quit now)");
        });
        const sender = new BatchSender({ client, counters: c, onBatch: () => progress.update(), errorsOut, batchSize, concurrency });

        try {
          await sendLines(untilAborted(readLines(input, c), reading.signal), { c, sender, progress, defaultTtl, interrupted: () => interrupted });
          if (interrupted) c.items -= sender.pending;
          await sender.finish(!interrupted);
        } finally {
          stopInterrupt();
          progress.stop();
          if ("destroy" in input) input.destroy();
          if (errorsOut && !errorsOut.destroyed) await new Promise<void>((r) => errorsOut.end(r));
        }
        const code = finishLoad({ file: file as string, errorsOut: opts.errorsOut, out, c, sender, interrupted, seconds: (io.now() - started) / 1000 });
        const writeFailure = failedLines?.failure();
        if (writeFailure === undefined) return code;
        out.note(`hypercache: --errors-out: writing ${JSON.stringify(opts.errorsOut)} failed: ${writeFailure.message} (the failed lines are not all in it)`);
        return EXIT.USAGE;
      }),
    );
}
