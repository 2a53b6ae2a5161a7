import { expect } from "chai";
import { stopOnSignals } from "../../campaign/stop-signals.js";

describe("campaign: Ctrl-C and SIGTERM", () => {
  it("the first signal stops the run in progress with its grace; a second kills its group at once and exits 130", () => {
    const calls: string[] = [];
    const handle = stopOnSignals({ stop: () => calls.push("stop"), killNow: () => calls.push("killNow"), print: (l) => calls.push(l), exit: (code) => calls.push(`exit ${code}`) });
    handle("SIGINT");
    expect(calls).to.deep.equal(["campaign: SIGINT: stopping the run in progress, then writing the summary (again to kill it at once)", "stop"]);
    handle("SIGTERM");
    expect(calls.slice(2)).to.deep.equal(["campaign: second SIGTERM: killing the run in progress and leaving now", "killNow", "exit 130"]);
  });
});
