// BootSignals: a stop signal during boot ends the process at once before the node exists, and is
// held for the shutdown after (a PID 1 without a handler ignored it: killed at the grace period).
import { expect } from "chai";
import { EventEmitter } from "node:events";
import { BootSignals, type SignalSource } from "../../../src/boot-signals.js";

function source(): EventEmitter & SignalSource & { fire(signal: "SIGTERM" | "SIGINT"): void } {
  const e = new EventEmitter() as EventEmitter & SignalSource & { fire(signal: "SIGTERM" | "SIGINT"): void };
  e.fire = (signal) => void e.emit(signal, signal);
  return e;
}

describe("boot-signals: BootSignals", () => {
  it("handles SIGTERM and SIGINT from the start: before the node exists a signal ends the process at once", () => {
    const s = source();
    const exits: string[] = [];
    new BootSignals((signal, code) => exits.push(`${signal} ${code}`), s);
    expect(s.listenerCount("SIGTERM")).to.equal(1);
    expect(s.listenerCount("SIGINT")).to.equal(1);
    s.fire("SIGTERM");
    s.fire("SIGINT");
    expect(exits, "exit 0, once").to.deep.equal(["SIGTERM 0"]);
  });

  it("once the node exists a signal is held and handed over by handOver(), which removes the handlers; a second one exits 130", () => {
    const s = source();
    const exits: string[] = [];
    const boot = new BootSignals((signal, code) => exits.push(`${signal} ${code}`), s);
    boot.hold();
    s.fire("SIGINT");
    expect(exits, "no exit while the node may hold writes").to.deep.equal([]);
    s.fire("SIGTERM");
    s.fire("SIGTERM");
    expect(exits, "a second signal ends it at once, as during the shutdown; once").to.deep.equal(["SIGTERM 130"]);
    expect(boot.handOver(() => undefined)).to.equal("SIGINT");
    expect(s.listenerCount("SIGTERM") + s.listenerCount("SIGINT")).to.equal(0);
  });

  it("handOver() without a signal returns undefined", () => {
    const s = source();
    const boot = new BootSignals(() => undefined, s);
    boot.hold();
    expect(boot.handOver(() => undefined)).to.equal(undefined);
  });

  it("handOver() removes its handlers only after the shutdown's are in place: a signal never finds none (Node drops a pending one when the last handler goes)", () => {
    const s = source();
    const boot = new BootSignals(() => undefined, s);
    boot.hold();
    let fewest = Infinity;
    const off = s.off.bind(s);
    s.off = ((event: "SIGTERM" | "SIGINT", listener: (signal: "SIGTERM" | "SIGINT") => void) => {
      off(event, listener);
      fewest = Math.min(fewest, s.listenerCount(event));
      return s;
    }) as typeof s.off;
    const shutdown: string[] = [];
    boot.handOver(() => {
      s.on("SIGTERM", () => shutdown.push("SIGTERM"));
      s.on("SIGINT", () => shutdown.push("SIGINT"));
    });
    expect(fewest, "handlers left on each signal as the boot's were removed").to.equal(1);
    s.fire("SIGTERM");
    expect(shutdown).to.deep.equal(["SIGTERM"]);
  });
});
