// attempt-deadline.ts on a ManualClock: the connector's limit and the signal that ends an attempt
// whose headers did not come in time, and which leaves nothing on the caller's signal.
import { getEventListeners } from "node:events";
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { AttemptSignal, deadlineConnector, type Connector } from "../../src/attempt-deadline.js";

interface Options {
  hostname: string;
  port: string;
}
interface FakeSocket {
  destroy(): void;
}
type Callback = Parameters<Connector<Options, FakeSocket>>[1];
const options: Options = { hostname: "10.0.0.9", port: "8080" };
const timeoutError = () => Object.assign(new Error("connect timeout"), { code: "UND_ERR_CONNECT_TIMEOUT" });

describe("client/attempt-deadline", () => {
  it("a connection not made within the limit fails with UND_ERR_CONNECT_TIMEOUT and its socket is destroyed; one made in time passes through", () => {
    const clock = new ManualClock();
    let destroyed = 0;
    let finish: Callback | undefined;
    const hanging: Connector<Options, FakeSocket> = (_o, cb) => ((finish = cb), { destroy: () => destroyed++ });
    const got: unknown[][] = [];
    deadlineConnector(hanging, 500, clock, timeoutError)(options, (...a) => got.push(a));
    clock.advance(499);
    expect(got).to.have.length(0);
    clock.advance(1);
    expect(got).to.have.length(1);
    expect((got[0]?.[0] as { code?: string }).code).to.equal("UND_ERR_CONNECT_TIMEOUT");
    expect(destroyed).to.equal(1);
    // A socket that comes after the limit is let go, not handed to undici.
    const late = { destroy: () => destroyed++ };
    finish?.(null, late);
    expect(got).to.have.length(1);
    expect(destroyed).to.equal(2);

    deadlineConnector(hanging, 500, clock, timeoutError)(options, (...a) => got.push(a));
    finish?.(null, late);
    expect(got.at(-1)).to.deep.equal([null, late]);
    expect(clock.pending, "its timer cancelled").to.equal(0);
  });

  it("the signal aborts with a TimeoutError at the limit unless the headers came; the caller's abort passes through; no listener stays on the caller's signal", () => {
    const clock = new ManualClock();
    const caller = new AbortController();
    const s = new AttemptSignal(caller.signal, clock, 200);
    let fired = 0;
    const l = () => fired++;
    s.addEventListener("abort", l);
    clock.advance(200);
    expect(s.aborted).to.equal(true);
    expect((s.reason as Error).name).to.equal("TimeoutError");
    expect(fired).to.equal(1);
    expect(getEventListeners(caller.signal, "abort")).to.have.length(0);

    const t = new AttemptSignal(caller.signal, clock, 200);
    t.addEventListener("abort", l);
    t.headersCame();
    clock.advance(1_000);
    expect(t.aborted).to.equal(false);
    caller.abort(new Error("the caller's"));
    expect(t.aborted).to.equal(true);
    expect((t.reason as Error).message).to.equal("the caller's");
    expect(fired).to.equal(2);

    const other = new AbortController();
    const u = new AttemptSignal(other.signal, clock, 200);
    u.addEventListener("abort", l);
    u.headersCame();
    u.removeEventListener("abort", l); // undici, once the body is done
    expect(getEventListeners(other.signal, "abort")).to.have.length(0);
    expect(clock.pending).to.equal(0);
  });
});
