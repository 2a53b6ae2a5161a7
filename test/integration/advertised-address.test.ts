// SERVICE_DIST_ADDR is also the address peers dial (SPEC-NOTES). A node without seeds keeps the
// default form ":port" (every interface, no host); a node that joins it through a seed keeps the
// address it reached it at, although the seed's own gossip names itself ":port". A manual
// removal of an id that was never a member answers 404 and changes nothing.
import { expect } from "chai";
import { freePorts } from "../helpers/ports.js";
import { startNode, type NodeProcess } from "../helpers/node-process.js";
import { eventually, getJson, put, type MembersBody } from "./cluster-helpers.js";

describe("advertised peer address: a seed bound to ':port' and a node that joins it", function () {
  this.timeout(30_000);
  let seed: NodeProcess;
  let joiner: NodeProcess;
  let seedDist: number;

  before(async () => {
    const [api, mgmt, dist] = await freePorts(3);
    seedDist = dist as number;
    seed = await startNode({ id: "s1", ports: { api: api as number, mgmt: mgmt as number, dist: seedDist }, env: { SERVICE_DIST_ADDR: `:${seedDist}`, SERVICE_HEARTBEAT: "300ms" } });
    joiner = await startNode({ id: "j2", env: { SERVICE_SEEDS: `s1@127.0.0.1:${seedDist}`, SERVICE_HEARTBEAT: "300ms", SERVICE_DEAD_AFTER: "10s" } });
  });
  after(async () => {
    await Promise.all([seed?.stop("SIGKILL"), joiner?.stop("SIGKILL")]);
  });

  it("after several gossip rounds the joiner still dials the seed at 127.0.0.1:<port>, both list each other alive, and a write at ALL reaches both", async () => {
    const views = await eventually(
      () => Promise.all([getJson<MembersBody>(`${seed.mgmt}/cluster/members`), getJson<MembersBody>(`${joiner.mgmt}/cluster/members`)]),
      ([a, b]) => a.members.some((m) => m.id === "j2" && m.state === "alive") && b.members.some((m) => m.id === "s1" && m.state === "alive"),
    );
    // Let several gossip rounds carry the seed's own ":port" claim to the joiner.
    await new Promise((r) => setTimeout(r, 2500));
    const after = await getJson<MembersBody>(`${joiner.mgmt}/cluster/members`);
    expect(after.members.find((m) => m.id === "s1"), JSON.stringify(after.members)).to.deep.include({ address: `127.0.0.1:${seedDist}`, state: "alive" });
    expect(views[0].members.find((m) => m.id === "s1")?.address, "the seed shows its own bind address").to.equal(`:${seedDist}`);
    const w = await put(joiner, "adv-key", "v", "?consistency=all");
    expect(w.status, w.text).to.equal(200);
  });

  it("DELETE /cluster/members/{id} of an id that was never a member answers 404 and logs nothing", async () => {
    const from = seed.logs.length;
    const res = await fetch(`${seed.mgmt}/cluster/members/never-here`, { method: "DELETE" });
    expect(res.status).to.equal(404);
    expect(((await res.json()) as { code: string }).code).to.equal("NOT_FOUND");
    expect(seed.logs.slice(from).filter((r) => r.level !== "debug").map((r) => r.message)).to.deep.equal([]);
    const members = await getJson<MembersBody>(`${seed.mgmt}/cluster/members`);
    expect(members.members.map((m) => m.id).sort()).to.deep.equal(["j2", "s1"]);
  });

  it("when the seed was suspected and comes back, its own claim (alive, naming ':port') does not replace the address either", async () => {
    seed.child.kill("SIGSTOP");
    try {
      await eventually(() => getJson<MembersBody>(`${joiner.mgmt}/cluster/members`), (b) => b.members.some((m) => m.id === "s1" && m.state === "suspect"), 5000, 50);
    } finally {
      seed.child.kill("SIGCONT");
    }
    const back = await eventually(() => getJson<MembersBody>(`${joiner.mgmt}/cluster/members`), (b) => b.members.some((m) => m.id === "s1" && m.state === "alive"), 8000, 50);
    expect(back.members.find((m) => m.id === "s1")?.address).to.equal(`127.0.0.1:${seedDist}`);
  });
});
