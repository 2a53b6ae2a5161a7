// The node's logger: winston, one JSON record per line on stdout, every record carrying node_id.
import winston from "winston";
import type { Writable } from "node:stream";
import type { LogLevel } from "../config/index.js";

/** Structured fields of a record. */
export type LogFields = Record<string, unknown>;

/** The logging surface the rest of the code uses. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose records also carry `fields`. */
  child(fields: LogFields): Logger;
  isDebugEnabled(): boolean;
}

/** Creates the JSON logger. `stream` defaults to stdout (tests pass their own). */
export function createLogger(opts: { nodeId: string; level: LogLevel; stream?: Writable }): Logger {
  const w = winston.createLogger({
    level: opts.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    defaultMeta: { node_id: opts.nodeId },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [opts.stream ? new winston.transports.Stream({ stream: opts.stream }) : new winston.transports.Console()],
  });
  return wrap(w);
}

function wrap(w: winston.Logger): Logger {
  return {
    debug: (m, f) => void w.debug(m, f),
    info: (m, f) => void w.info(m, f),
    warn: (m, f) => void w.warn(m, f),
    error: (m, f) => void w.error(m, f),
    child: (f) => wrap(w.child(f)),
    isDebugEnabled: () => w.isDebugEnabled(),
  };
}

/** A logger that keeps records in memory, for tests. */
export interface RecordingLogger extends Logger {
  readonly records: Array<{ level: LogLevel; message: string; fields: LogFields }>;
}

export function recordingLogger(level: LogLevel = "debug"): RecordingLogger {
  const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
  const records: RecordingLogger["records"] = [];
  const make = (bound: LogFields): RecordingLogger => {
    const at = (l: LogLevel) => (message: string, fields?: LogFields) => {
      if (order[l] <= order[level]) records.push({ level: l, message, fields: { ...bound, ...fields } });
    };
    return {
      records,
      debug: at("debug"),
      info: at("info"),
      warn: at("warn"),
      error: at("error"),
      child: (f) => make({ ...bound, ...f }),
      isDebugEnabled: () => order[level] >= order.debug,
    };
  };
  return make({});
}
