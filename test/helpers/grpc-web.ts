// The parts of a gRPC-Web answer body the tests read: its envelopes, and the header lines of its
// trailer frame (flags 0x80).
import { EnvelopeReader } from "../../src/peer/connect-envelopes.js";

export const GRPC_WEB_TRAILER = 0x80;

export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/** The envelopes of an answer body, or what is wrong with its framing. */
export function envelopesOf(body: Uint8Array): { envelopes: Envelope[]; problem?: string } {
  const envelopes: Envelope[] = [];
  const reader = new EnvelopeReader(2 ** 31);
  reader.push(body, (flags, data) => envelopes.push({ flags, data }));
  return reader.pending > 0 ? { envelopes, problem: `the answer ends inside an envelope (${reader.pending} bytes of it)` } : { envelopes };
}

/** The header lines of a trailer frame, by lower-case name. */
export function trailerFields(data: Uint8Array): Map<string, string> {
  const lines = Buffer.from(data).toString("utf8").split("\r\n").filter((l) => l.includes(":"));
  return new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).trim().toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as const));
}
