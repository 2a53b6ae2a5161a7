// TlsReloader: a changed set of TLS files is read, checked and applied once; an unchanged one is
// not read at all; a set that does not check is logged and the one in use stays.
import { expect } from "chai";
import { fileStamps, TlsReloader, type FileStamp } from "../../../src/config/index.js";
import { LOG } from "../../../src/log/index.js";
import { livePeerTls } from "../../../src/peer/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function harness() {
  const clock = new ManualClock();
  const stamps = new Map<string, FileStamp | undefined>([
    ["cert.pem", { ino: 1, size: 100, mtimeMs: 1000 }],
    ["key.pem", { ino: 2, size: 50, mtimeMs: 1000 }],
  ]);
  const logs: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  let contents = "A";
  let loads = 0;
  const applied: string[] = [];
  const reloader = new TlsReloader(
    "api",
    ["cert.pem", "key.pem"],
    () => {
      loads++;
      if ([...stamps.values()].includes(undefined)) throw new Error("SERVICE_API_TLS_CERT: cannot read cert.pem: no such file");
      if (contents === "broken") throw new Error("SERVICE_API_TLS_CERT: unusable certificate");
      return contents;
    },
    (m) => applied.push(m),
    {
      timers: clock,
      intervalMs: 10_000,
      stamp: (p) => {
        const s = stamps.get(p);
        return s ? Promise.resolve(s) : Promise.reject(Object.assign(new Error("gone"), { code: "ENOENT" }));
      },
      logger: {
        info: (message, fields) => void logs.push({ level: "info", message, fields }),
        warn: (message, fields) => void logs.push({ level: "warn", message, fields }),
      },
    },
  );
  const touch = (path: string, next: string) => {
    const s = stamps.get(path) ?? { ino: 9, size: 0, mtimeMs: 0 };
    stamps.set(path, { ...s, mtimeMs: s.mtimeMs + 1000 });
    contents = next;
  };
  return { clock, stamps, logs, applied, reloader, touch, loads: () => loads };
}

describe("config/tls-reload: TlsReloader", () => {
  it("reads nothing while the files stay as they were", async () => {
    const h = harness();
    await h.reloader.start();
    await h.clock.advanceAsync(60_000);
    expect(h.loads()).to.equal(0);
    expect(h.applied).to.deep.equal([]);
  });

  it("a changed file: the set is read and applied once, at the next look, and logged with its listener", async () => {
    const h = harness();
    await h.reloader.start();
    h.touch("cert.pem", "B");
    await h.clock.advanceAsync(9_999);
    expect(h.applied, "not before the interval").to.deep.equal([]);
    await h.clock.advanceAsync(1);
    expect(h.applied).to.deep.equal(["B"]);
    await h.clock.advanceAsync(50_000);
    expect(h.applied, "once per change").to.deep.equal(["B"]);
    expect(h.logs).to.deep.equal([{ level: "info", message: LOG.tlsReloaded, fields: { listener: "api" } }]);
  });

  it("a set that does not check is logged once and not applied; the next change is tried again", async () => {
    const h = harness();
    await h.reloader.start();
    h.touch("key.pem", "broken");
    await h.clock.advanceAsync(30_000);
    expect(h.applied).to.deep.equal([]);
    expect(h.logs).to.deep.equal([{ level: "warn", message: LOG.tlsReloadFailed, fields: { listener: "api", error: "SERVICE_API_TLS_CERT: unusable certificate" } }]);
    h.touch("key.pem", "C");
    await h.clock.advanceAsync(10_000);
    expect(h.applied).to.deep.equal(["C"]);
  });

  it("a file that disappears and comes back is a change (a Secret's files are swapped, not edited)", async () => {
    const h = harness();
    await h.reloader.start();
    h.stamps.set("cert.pem", undefined);
    await h.clock.advanceAsync(10_000);
    expect(h.logs.map((l) => l.level), "gone: the set in use stays").to.deep.equal(["warn"]);
    expect(h.applied).to.deep.equal([]);
    h.stamps.set("cert.pem", { ino: 7, size: 120, mtimeMs: 5000 });
    h.touch("key.pem", "D");
    await h.clock.advanceAsync(10_000);
    expect(h.applied).to.deep.equal(["D"]);
  });

  it("a change between the baseline (stamps taken before the set in use was read) and start() is seen by the first look", async () => {
    const h = harness();
    const baseline = await fileStamps(["cert.pem", "key.pem"], (p) => Promise.resolve(h.stamps.get(p) as FileStamp));
    h.touch("cert.pem", "renewed during boot");
    await h.reloader.start(baseline);
    await h.clock.advanceAsync(10_000);
    // Before: start() took the files as they were then, and the renewal waited for the next one.
    expect(h.applied).to.deep.equal(["renewed during boot"]);
  });

  it("stop() ends the looks", async () => {
    const h = harness();
    await h.reloader.start();
    h.reloader.stop();
    h.touch("cert.pem", "E");
    await h.clock.advanceAsync(60_000);
    expect(h.loads()).to.equal(0);
  });
});

describe("peer/peer-tls: livePeerTls", () => {
  it("a spread of its options (what the peer client gives each new session) copies the set in use", () => {
    const a = { ca: Buffer.from("ca-a"), cert: Buffer.from("cert-a"), key: Buffer.from("key-a") };
    const b = { ca: Buffer.from("ca-b"), cert: Buffer.from("cert-b"), key: Buffer.from("key-b") };
    const live = livePeerTls(a);
    expect({ ...live.options }).to.deep.equal(a);
    live.replace(b);
    expect({ ...live.options }).to.deep.equal(b);
  });
});
