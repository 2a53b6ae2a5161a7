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
    new BootSignals((signal) => exits.push(signal), s);
    expect(s.listenerCount("SIGTERM")).to.equal(1);
    expect(s.listenerCount("SIGINT")).to.equal(1);
    s.fire("SIGTERM");
    expect(exits).to.deep.equal(["SIGTERM"]);
  });

  it("once the node exists a signal is held, the first one, and handed over by release(), which removes the handlers", () => {
    const s = source();
    const exits: string[] = [];
    const boot = new BootSignals((signal) => exits.push(signal), s);
    boot.hold();
    s.fire("SIGINT");
    s.fire("SIGTERM");
    expect(exits, "no exit while the node may hold writes").to.deep.equal([]);
    expect(boot.release()).to.equal("SIGINT");
    expect(s.listenerCount("SIGTERM") + s.listenerCount("SIGINT")).to.equal(0);
  });

  it("release() without a signal returns undefined", () => {
    const s = source();
    const boot = new BootSignals(() => undefined, s);
    boot.hold();
    expect(boot.release()).to.equal(undefined);
  });
});
