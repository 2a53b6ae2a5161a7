import { expect } from "chai";
import { ConnectionSlots } from "../../../src/http/connection-slots.js";

describe("ConnectionSlots", () => {
  /** Ranks by name: absent = 1 (spare), 0 = must stay. */
  const ranks = new Map<string, number>();
  const slots = (max: number, scanMax?: number) => new ConnectionSlots<string>(max, (c) => ranks.get(c) ?? 1, scanMax);
  beforeEach(() => ranks.clear());

  it("takes connections in while there is room", () => {
    const s = slots(2);
    expect(s.admit("a")).to.equal(undefined);
    expect(s.admit("b")).to.equal(undefined);
    expect(s.size).to.equal(2);
    expect(s.counts).to.deep.equal({ evicted: 0, refused: 0 });
  });

  it("at the cap, closes the oldest spare connection for the new one", () => {
    const s = slots(3);
    for (const c of ["a", "b", "c"]) s.admit(c);
    ranks.set("a", 0);
    expect(s.admit("d")).to.equal("b");
    expect(s.admit("e")).to.equal("c");
    // the newest spare one goes last
    expect(s.admit("f")).to.equal("d");
    expect(s.size).to.equal(3);
    expect(s.counts).to.deep.equal({ evicted: 3, refused: 0 });
  });

  it("closes a higher rank before an older lower one", () => {
    const s = slots(3);
    for (const c of ["pooled", "silent", "stalled"]) s.admit(c);
    ranks.set("pooled", 1).set("silent", 2).set("stalled", 3);
    expect(s.admit("x")).to.equal("stalled");
    ranks.set("x", 0);
    expect(s.admit("y")).to.equal("silent");
    ranks.set("y", 0);
    expect(s.admit("z")).to.equal("pooled");
  });

  it("refuses the new connection when every open one must stay", () => {
    const s = slots(2);
    s.admit("a");
    s.admit("b");
    ranks.set("a", 0).set("b", 0);
    expect(s.admit("c")).to.equal("c");
    expect(s.size).to.equal(2);
    expect(s.counts).to.deep.equal({ evicted: 0, refused: 1 });
    // a closed connection frees its slot
    s.release("a");
    expect(s.admit("d")).to.equal(undefined);
  });

  it("looks at no more than scanMax connections per admission, and moves the busy ones it saw to the young end", () => {
    const s = slots(6, 2);
    for (const c of ["b1", "b2", "b3", "b4", "i1", "i2"]) s.admit(c);
    for (const c of ["b1", "b2", "b3", "b4"]) ranks.set(c, 0);
    let looks = 0;
    const counted = new ConnectionSlots<string>(6, (c) => (looks++, ranks.get(c) ?? 1), 2);
    for (const c of ["b1", "b2", "b3", "b4", "i1", "i2"]) counted.admit(c);
    // b1, b2 seen (busy): refused, and they move behind i2
    expect(counted.admit("n1")).to.equal("n1");
    expect(looks).to.equal(2);
    // b3, b4 seen next: refused again
    expect(counted.admit("n2")).to.equal("n2");
    // then the idle ones come up
    expect(counted.admit("n3")).to.equal("i1");
    expect(looks).to.equal(6);
    expect(s.admit("x")).to.equal("x");
  });

  it("ignores the release of a connection it evicted or refused", () => {
    const s = slots(1);
    s.admit("a");
    expect(s.admit("b")).to.equal("a");
    s.release("a");
    expect(s.size).to.equal(1);
    ranks.set("b", 0);
    expect(s.admit("c")).to.equal("c");
    s.release("c");
    expect(s.size).to.equal(1);
  });
});
