// How results are printed: JSON (one document, or one per line for streams) when stdout is not a
// terminal or with --json, readable text with colours on a terminal.
import pc from "picocolors";
import type { Io } from "./io.js";

export type Colors = ReturnType<typeof pc.createColors>;

export class Output {
  readonly json: boolean;
  readonly color: Colors;

  constructor(
    private readonly io: Io,
    opts: { json?: boolean | undefined },
  ) {
    this.json = opts.json === true || !io.stdout.isTTY;
    this.color = pc.createColors(!this.json && io.stdout.isTTY === true && io.env.NO_COLOR === undefined);
  }

  /** Prints a result: `value` as JSON, or `human()` on a terminal. */
  result(value: unknown, human: () => string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
  }

  /** One line of text on stdout (human mode streams). */
  line(text: string): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** A line for the operator on stderr (progress, warnings, verbose events). */
  note(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }
}
