import { expect } from "chai";
import { ConnectionSlots } from "../../../src/http/connection-slots.js";

describe("ConnectionSlots", () => {
  const busy = new Set<string>();
  const slots = (max: number) => new ConnectionSlots<string>(max, (c) => !busy.has(c));
  beforeEach(() => busy.clear());

  it("takes connections in while there is room", () => {
    const s = slots(2);
    expect(s.admit("a")).to.equal(undefined);
    expect(s.admit("b")).to.equal(undefined);
    expect(s.size).to.equal(2);
    expect(s.counts).to.deep.equal({ evicted: 0, refused: 0 });
  });

  it("at the cap, closes the oldest idle connection for the new one", () => {
    const s = slots(3);
    for (const c of ["a", "b", "c"]) s.admit(c);
    busy.add("a");
    expect(s.admit("d")).to.equal("b");
    expect(s.admit("e")).to.equal("c");
    // the newest idle one goes last
    expect(s.admit("f")).to.equal("d");
    expect(s.size).to.equal(3);
    expect(s.counts).to.deep.equal({ evicted: 3, refused: 0 });
  });

  it("refuses the new connection when every open one is busy", () => {
    const s = slots(2);
    s.admit("a");
    s.admit("b");
    busy.add("a").add("b");
    expect(s.admit("c")).to.equal("c");
    expect(s.size).to.equal(2);
    expect(s.counts).to.deep.equal({ evicted: 0, refused: 1 });
    // a closed connection frees its slot
    s.release("a");
    expect(s.admit("d")).to.equal(undefined);
  });

  it("ignores the release of a connection it evicted or refused", () => {
    const s = slots(1);
    s.admit("a");
    expect(s.admit("b")).to.equal("a");
    s.release("a");
    expect(s.size).to.equal(1);
    busy.add("b");
    expect(s.admit("c")).to.equal("c");
    s.release("c");
    expect(s.size).to.equal(1);
  });
});
