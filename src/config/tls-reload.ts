// TLS files change under a running node: cert-manager renews a Kubernetes Secret, an operator
// replaces the files. The listeners read them at start only, so a renewed certificate was used
// only after a restart, and when a shared peer certificate expired every node refused every
// other at once. A TlsReloader looks at the files' stamps (inode, size, mtime) every interval;
// when one changed it reads the whole set again, checks it as at start (`load`, which throws
// TlsMaterialError) and hands it to `apply`. A set that does not read or check is logged and the
// one in use stays (a Secret is swapped atomically, but files copied by hand can be caught
// half-written: the next change is tried again).
import type { TimerHandle, Timers } from "../core/clock.js";
import { LOG } from "../log/messages.js";
import type { Logger } from "../log/logger.js";
import type { TlsListener } from "./tls-material.js";

/** What identifies one version of a file. */
export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export interface TlsReloadDeps {
  readonly timers: Timers;
  /** How often the stamps are looked at. */
  readonly intervalMs: number;
  /** The stamp of a file (fs.promises.stat); a rejection counts as a change once the file is back. */
  readonly stamp: (path: string) => Promise<FileStamp>;
  readonly logger: Pick<Logger, "info" | "warn">;
}

/** A reloader as a SIGHUP sees it: one look at its files now. */
export type TlsCheck = Pick<TlsReloader<unknown>, "check">;

export class TlsReloader<T> {
  private seen: string | undefined;
  private timer: TimerHandle | undefined;
  private busy = false;
  /** The last changed set failed to read, check or apply. */
  private refused = false;

  constructor(
    private readonly listener: TlsListener,
    private readonly files: readonly string[],
    private readonly load: () => T,
    private readonly apply: (material: T) => void,
    private readonly deps: TlsReloadDeps,
  ) {}

  /**
   * Looks every interval. `baseline` (fileStamps of the files, taken before the set in use was
   * read) is what a change is measured against; without it, the files as they are now.
   */
  async start(baseline?: string): Promise<void> {
    this.seen = baseline ?? (await this.stamps());
    this.timer = this.deps.timers.every(this.deps.intervalMs, () => void this.check());
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One look; true when a changed set was read, checked and applied. */
  async check(): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    try {
      const now = await this.stamps();
      if (now === this.seen) return false;
      this.seen = now;
      this.apply(this.load());
      this.refused = false;
      this.deps.logger.info(LOG.tlsReloaded, { listener: this.listener });
      return true;
    } catch (err) {
      this.refused = true;
      this.deps.logger.warn(LOG.tlsReloadFailed, { listener: this.listener, error: err instanceof Error ? err.message : String(err) });
      return false;
    } finally {
      this.busy = false;
    }
  }

  /**
   * When the last changed set was refused, the next look reads it again even if its files have
   * not changed: for a refusal that depends on another listener's set (the client and peer CAs
   * must not share a certificate without a peer token), which may just have changed.
   */
  retryRefused(): void {
    if (this.refused) this.seen = undefined;
  }

  private stamps(): Promise<string> {
    return fileStamps(this.files, this.deps.stamp);
  }
}

/** The stamps of `files` as one string; a file that cannot be stamped counts as its error code. */
export async function fileStamps(files: readonly string[], stamp: (path: string) => Promise<FileStamp>): Promise<string> {
  const parts = await Promise.all(
    files.map((f) =>
      stamp(f).then(
        (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
        (err: unknown) => `unreadable:${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      ),
    ),
  );
  return parts.join("|");
}
