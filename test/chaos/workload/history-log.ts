// Appends history records and run events as JSON Lines while the run goes on, so a run that dies
// still leaves what it saw.
import { createWriteStream, type WriteStream } from "node:fs";

export class JsonLinesFile<T> {
  private readonly stream: WriteStream;
  readonly items: T[] = [];

  constructor(path: string) {
    this.stream = createWriteStream(path, { flags: "w" });
  }

  append(item: T): void {
    this.items.push(item);
    this.stream.write(`${JSON.stringify(item)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}
