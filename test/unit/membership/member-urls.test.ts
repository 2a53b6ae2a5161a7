// Advertised URLs in membership: a node gossips its own, peers take a member's URLs from its own
// claim, from hearsay only to fill in unknown ones or with a newer incarnation; invalid URLs are
// ignored; a URL change is a membership change.
import { expect } from "chai";
import { recordingLogger } from "../../../src/log/index.js";
import { MemberTable, type Member } from "../../../src/membership/index.js";
import { Metrics } from "../../../src/observability/index.js";
import { ManualClock } from "../../helpers/manual-clock.js";

function table(self: { api?: string; mgmt?: string } = {}) {
  const clock = new ManualClock();
  return new MemberTable({ selfId: "me", selfAddress: "me:7946", selfApiUrl: self.api, selfMgmtUrl: self.mgmt, clock, metrics: new Metrics(), logger: recordingLogger("error") });
}

const claim = (id: string, incarnation: number, api: string, mgmt = api.replace(":8080", ":8081")): Member => ({ id, address: `${id}:7946`, state: "alive", incarnation, lastSeenMs: 0, apiUrl: api, mgmtUrl: mgmt });

describe("membership: advertised URLs", () => {
  it("lists the local node with the URLs it advertises", () => {
    const t = table({ api: "https://me.example:8080", mgmt: "https://me.example:8081" });
    expect(t.get("me")).to.include({ apiUrl: "https://me.example:8080", mgmtUrl: "https://me.example:8081" });
  });

  it("takes a member's URLs from its own claim, and a change of them bumps the version", () => {
    const t = table();
    t.merge("n1", [claim("n1", 1, "http://n1:8080")]);
    expect(t.get("n1")).to.include({ apiUrl: "http://n1:8080", mgmtUrl: "http://n1:8081" });
    const v = t.version;
    t.merge("n1", [claim("n1", 1, "http://n1-new:8080")]);
    expect(t.get("n1")?.apiUrl).to.equal("http://n1-new:8080");
    expect(t.version).to.equal(v + 1);
    t.merge("n1", [claim("n1", 1, "http://n1-new:8080")]);
    expect(t.version, "the same URLs again change nothing").to.equal(v + 1);
  });

  it("takes hearsay URLs only to fill in unknown ones or from a newer incarnation", () => {
    const t = table();
    t.merge("n2", [claim("n3", 1, "http://n3:8080")]);
    expect(t.get("n3")?.apiUrl, "unknown until now: filled in from hearsay").to.equal("http://n3:8080");
    t.merge("n2", [claim("n3", 1, "http://evil:8080")]);
    expect(t.get("n3")?.apiUrl, "same incarnation hearsay does not override").to.equal("http://n3:8080");
    t.merge("n2", [claim("n3", 2, "http://n3-restarted:8080")]);
    expect(t.get("n3")?.apiUrl, "a newer incarnation does").to.equal("http://n3-restarted:8080");
  });

  it("ignores URLs that are not http(s) base URLs and claims about the local node's URLs", () => {
    const t = table({ api: "http://me:8080", mgmt: "http://me:8081" });
    t.merge("n1", [{ ...claim("n1", 1, "javascript:alert(1)"), mgmtUrl: "http://n1:81/?x=1" }, { ...claim("me", 1, "http://spoof:8080") }]);
    expect(t.get("n1")).to.include({ apiUrl: "", mgmtUrl: "" });
    expect(t.get("me")?.apiUrl).to.equal("http://me:8080");
  });
});
