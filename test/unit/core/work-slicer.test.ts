import { expect } from "chai";
import { WorkSlicer } from "../../../src/core/clock.js";

describe("core/WorkSlicer", () => {
  it("says the budget is spent at the budget-th unit and yields once per spent budget", async () => {
    let yields = 0;
    const slicer = new WorkSlicer(async () => {
      yields++;
    }, 3);
    expect([slicer.spend(), slicer.spend()]).to.deep.equal([false, false]);
    await slicer.pause();
    expect(yields, "pause before the budget is spent does not yield").to.equal(0);
    expect(slicer.spend()).to.equal(true);
    await slicer.pause();
    expect(yields).to.equal(1);
    expect(slicer.spend(), "a new budget starts after a pause").to.equal(false);
    expect(slicer.spend(5)).to.equal(true);
    await slicer.pause();
    expect(yields).to.equal(2);
  });
});
