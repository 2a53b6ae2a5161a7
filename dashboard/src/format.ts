// Pure formatting helpers of the views.

/** "just now", "4 s ago", "3 min ago", "2 h ago". */
export function ago(thenMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 1) return "just now";
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

/** "59 s", "4 min 2 s", "3 h 5 min", "2 d 1 h". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** The live key and value bytes against SERVICE_MAX_DATA_BYTES (0: no byte limit). */
export function dataLine(held: number, max: number): string {
  return max > 0 ? `${bytes(held)} of ${bytes(max)} (${percent(held / max)})` : `${bytes(held)} (no byte limit)`;
}

export function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

export function rate(perS: number | undefined): string {
  if (perS === undefined || !Number.isFinite(perS)) return "–";
  return perS >= 100 ? perS.toFixed(0) : perS.toFixed(perS >= 10 ? 1 : 2);
}

/** Decodes base64 to bytes. */
export function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * The length of `b` without a UTF-8 sequence its end cuts short (the server cuts a preview at a
 * byte count, which may fall inside a character).
 */
function wholeCharsLength(b: Uint8Array): number {
  let lead = b.length - 1;
  while (lead >= 0 && lead > b.length - 4 && ((b[lead] as number) & 0xc0) === 0x80) lead--;
  if (lead < 0) return b.length;
  const first = b[lead] as number;
  const need = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + need > b.length ? lead : b.length;
}

/**
 * The bytes as UTF-8 text when they are valid UTF-8 without control characters (tabs and newlines
 * allowed). `cut`: the bytes are the start of a longer value, so a character cut short at the end
 * is dropped instead of making the whole preview hex.
 */
export function asText(b: Uint8Array, cut = false): string | undefined {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(cut ? b.subarray(0, wholeCharsLength(b)) : b);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

/** A hex dump: offset, 16 bytes in hex, and their printable ASCII. */
export function hexDump(b: Uint8Array): string {
  const lines: string[] = [];
  for (let off = 0; off < b.length; off += 16) {
    const row = b.subarray(off, off + 16);
    const hex = Array.from(row, (x) => x.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : ".")).join("");
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}

/** Whether the key browser treats the query as a glob (it has *, ? or [), else a prefix: the server's own test. */
export { isGlob } from "../../src/core/key-filter.js";
