// An unknown user name is checked against a decoy hash of the same bcrypt cost as the configured
// users' hashes (the most common cost; on a tie the higher), so a wrong name costs the same time
// as a wrong password and the answer time does not tell which names exist.
import { expect } from "chai";
import bcrypt from "bcryptjs";
import { BasicVerifier, type PasswordCompare } from "../../../src/auth/basic-auth.js";
import { ManualClock } from "../../helpers/manual-clock.js";

/** Fake hashes of the given costs (only the cost field matters to the decoy's choice). */
const user = (name: string, cost: number) => ({ username: name, passwordHash: `$2b$${String(cost).padStart(2, "0")}$${"x".repeat(53)}`, scopes: ["read"] as const });

/** The bcrypt cost of the hash an unknown user's password is compared with. */
async function decoyCost(users: ReturnType<typeof user>[]): Promise<number> {
  const hashes: string[] = [];
  const compare: PasswordCompare = async (_password, hash) => {
    hashes.push(hash);
    return false;
  };
  const v = new BasicVerifier(users, { clock: new ManualClock(), compare });
  expect(await v.verify("no-such-user", "whatever")).to.equal(undefined);
  expect(hashes).to.have.length(1);
  return Number(/^\$2[abxy]?\$(\d\d)\$/.exec(hashes[0]!)?.[1]);
}

describe("auth/basic-auth: the decoy hash of unknown users", () => {
  it("has the users' cost when they share one, whatever it is (4, 10, 12)", async () => {
    expect(await decoyCost([user("a", 4), user("b", 4)])).to.equal(4);
    expect(await decoyCost([user("a", 10)])).to.equal(10);
    expect(await decoyCost([user("a", 12), user("b", 12)])).to.equal(12);
  });

  it("has the most common cost when the users' costs differ, the higher one on a tie", async () => {
    expect(await decoyCost([user("a", 4), user("b", 12), user("c", 12)])).to.equal(12);
    expect(await decoyCost([user("a", 4), user("b", 4), user("c", 12)])).to.equal(4);
    expect(await decoyCost([user("a", 4), user("b", 12)])).to.equal(12);
  });

  it("never lets an unknown name in, even with a configured user's password", async () => {
    const users = [{ username: "alice", passwordHash: bcrypt.hashSync("alice-pw", 4), scopes: ["read"] as const }];
    const v = new BasicVerifier(users, { clock: new ManualClock() });
    expect(await v.verify("mallory", "alice-pw")).to.equal(undefined);
    expect(await v.verify("alice", "alice-pw")).to.include({ id: "alice" });
    expect(await v.verify("mallory", "alice-pw"), "not after alice's success is cached either").to.equal(undefined);
  });
});
