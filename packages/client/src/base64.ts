// Standard base64 without Node's Buffer, so the core runs in browsers. btoa/atob work on "binary
// strings"; the bytes are converted in slices to keep argument lists short.

/** Bytes per String.fromCharCode call. */
const SLICE_BYTES = 0x8000;

export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += SLICE_BYTES) {
    binary += String.fromCharCode(...bytes.subarray(i, i + SLICE_BYTES));
  }
  return btoa(binary);
}

export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
