// The web dashboard's built files (dist/dashboard: index.html and assets/ with content-hashed
// names), read once at start-up and kept in memory with their gzip form, so that serving them
// never touches the disk.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** One file as served. */
export interface DashboardAsset {
  readonly body: Buffer;
  /** The body gzipped, when that is smaller. */
  readonly gzip: Buffer | undefined;
  /** Strong ETag of the gzipped body (a representation of its own, RFC 9110 8.8.3); undefined without one. */
  readonly gzipEtag: string | undefined;
  readonly type: string;
  /** The name carries a content hash: the file never changes under its name. */
  readonly immutable: boolean;
  /** Strong ETag of the body as it is (the identity representation). */
  readonly etag: string;
}

export interface DashboardAssets {
  /** index.html (never cached without revalidation: it names the current hashed assets). */
  readonly index: DashboardAsset;
  /** Files under assets/, by file name. */
  readonly assets: ReadonlyMap<string, DashboardAsset>;
}

/** Names the dashboard build writes: `name-HASH.ext` with esbuild's 8-character hash. */
const HASHED_NAME = /-[A-Z0-9]{8}\.[a-z0-9]+$/;

const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
};

/** Builds one in-memory asset from its file name and bytes. */
function dashboardAsset(name: string, body: Buffer): DashboardAsset {
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  const gz = gzipSync(body, { level: 9 });
  const gzip = gz.length < body.length ? gz : undefined;
  return {
    body,
    gzip,
    gzipEtag: gzip === undefined ? undefined : etagOf(gzip),
    type: TYPES[ext] ?? "application/octet-stream",
    immutable: HASHED_NAME.test(name),
    etag: etagOf(body),
  };
}

/** A strong ETag naming exactly these bytes. */
function etagOf(bytes: Buffer): string {
  return `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`;
}

/**
 * Reads `dir` (index.html plus assets/) into memory; undefined when the dashboard was not built
 * (no index.html). Files in sub-folders of assets/ are not served.
 */
export function readDashboardAssets(dir: string): DashboardAssets | undefined {
  const indexPath = join(dir, "index.html");
  if (!existsSync(indexPath)) return undefined;
  const assets = new Map<string, DashboardAsset>();
  const assetDir = join(dir, "assets");
  if (existsSync(assetDir)) {
    for (const entry of readdirSync(assetDir, { withFileTypes: true })) {
      if (entry.isFile()) assets.set(entry.name, dashboardAsset(entry.name, readFileSync(join(assetDir, entry.name))));
    }
  }
  return { index: dashboardAsset("index.html", readFileSync(indexPath)), assets };
}
