// Fan-out of Server-Sent Events frames to subscribers. Each subscriber has a bounded queue:
// frames go straight to its sink while the sink accepts them; once the sink reports
// backpressure they queue, and past the bound the oldest queued frame is dropped (counted in
// dist.events.dropped). Publishing never waits for a subscriber.
import type { Metrics } from "./metrics.js";

/** Where a subscriber's frames go (an HTTP response in production). */
export interface SseSink {
  /** Writes a chunk; false means "buffer full, wait for drain". */
  write(chunk: string): boolean;
  /** Registers the callback to run when the sink can take more. */
  onDrain(callback: () => void): void;
}

/** Formats one frame. Data lines are split so a newline in the data cannot end the frame. */
export function formatFrame(event: string, data: string): string {
  return `event: ${event}\n${data.split("\n").map((l) => `data: ${l}`).join("\n")}\n\n`;
}

class Subscriber {
  private readonly queue: string[] = [];
  private blocked = false;

  constructor(private readonly sink: SseSink, private readonly bound: number, private readonly onDrop: () => void) {
    sink.onDrain(() => this.flush());
  }

  send(frame: string): void {
    if (this.blocked) {
      this.queue.push(frame);
      if (this.queue.length > this.bound) {
        this.queue.shift();
        this.onDrop();
      }
      return;
    }
    if (!this.sink.write(frame)) this.blocked = true;
  }

  get queued(): number {
    return this.queue.length;
  }

  private flush(): void {
    this.blocked = false;
    while (this.queue.length > 0) {
      if (!this.sink.write(this.queue.shift() as string)) {
        this.blocked = true;
        return;
      }
    }
  }
}

export class SseHub {
  private readonly subscribers = new Set<Subscriber>();

  constructor(private readonly deps: { metrics: Metrics; bufferFrames: number }) {}

  get size(): number {
    return this.subscribers.size;
  }

  /** Adds a subscriber; the returned function removes it. */
  subscribe(sink: SseSink): () => void {
    const s = new Subscriber(sink, this.deps.bufferFrames, () => this.deps.metrics.inc("dist.events.dropped"));
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** Sends one frame to every subscriber (formatted once). */
  publish(event: string, data: string): void {
    if (this.subscribers.size === 0) return;
    const frame = formatFrame(event, data);
    for (const s of this.subscribers) s.send(frame);
  }
}
