// HTTP/2 frames written by hand, for tests that need frames in an order or a grouping no client
// library sends (a reset in the same TCP write as the headers, an authority Node's client would
// refuse). Header blocks are HPACK literals without indexing (RFC 7541, 6.2.2), names and values
// shorter than 127 bytes.
import net from "node:net";

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, GOAWAY: 7 } as const;
export const FLAG = { END_STREAM: 0x1, END_HEADERS: 0x4 } as const;

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** A header block of literal fields, in the order given (pseudo-headers first, as HTTP/2 wants). */
export function headerBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(
    fields.map(([name, value]) => {
      if (name.length > 126 || value.length > 126) throw new Error("h2-frames: names and values under 127 bytes only");
      return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name, "latin1"), Buffer.from([value.length]), Buffer.from(value, "latin1")]);
    }),
  );
}

/** HEADERS (END_HEADERS) on `stream`, then RST_STREAM CANCEL on it: both go out in the caller's one write. */
export function headersThenReset(stream: number, fields: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, stream, headerBlock(fields)), frame(FRAME.RST_STREAM, 0, stream, Buffer.from([0, 0, 0, 8]))]);
}

/** What came back on a connection: the bytes read, and when the node closed it (ms after the write), if it did. */
export interface Conversation {
  readonly received: Buffer;
  readonly closedAfterMs: number | undefined;
}

/** Connects to `port` on loopback, writes `bytes` in one write, and reads until the node closes the connection or `waitMs` pass. */
export async function converse(port: number, bytes: Buffer | string, waitMs: number): Promise<Conversation> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await new Promise((r) => socket.once("connect", r));
  const received: Buffer[] = [];
  socket.on("data", (c: Buffer) => received.push(c));
  const t0 = performance.now();
  socket.write(bytes);
  const closedAfterMs = await new Promise<number | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), waitMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
  });
  socket.destroy();
  return { received: Buffer.concat(received), closedAfterMs };
}

/** Writes the preface, empty SETTINGS and `frames` in one write, and returns the types of the frames read back within `waitMs`. */
export async function sendFrames(port: number, frames: readonly Buffer[], waitMs = 300): Promise<number[]> {
  const { received } = await converse(port, Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0), ...frames]), waitMs);
  const types: number[] = [];
  for (let at = 0; at + 9 <= received.length; at += 9 + received.readUIntBE(at, 3)) types.push(received[at + 3] as number);
  return types;
}

/** Writes raw bytes (an HTTP/1.x request) to `port` and returns what came back within `waitMs`. */
export async function sendBytes(port: number, bytes: Buffer | string, waitMs = 300): Promise<string> {
  return (await converse(port, bytes, waitMs)).received.toString("latin1");
}
