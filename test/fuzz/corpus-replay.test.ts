// Regression tests from the fuzz corpus: each saved failing case, replayed against a fresh node,
// must now get an acceptable answer. Part of `npm test`; alone, after `npm run build`:
//   npx mocha --no-config -n import=tsx/esm --extension ts --timeout 60000 --exit test/fuzz/corpus-replay.test.ts
// `npm run fuzz` adds a file here for each new failure; fix the defect before committing it.
import { expect } from "chai";
import { fileURLToPath } from "node:url";
import { loadCorpus } from "./corpus.js";
import { loadOperations } from "./openapi-model.js";
import { runCase, type CaseJudge } from "./run-case.js";
import { FuzzTarget } from "./target-node.js";

const REPLAYS = 5;
const OPENAPI = (name: string) => fileURLToPath(new URL(`../../openapi/${name}`, import.meta.url));

describe("fuzz corpus replay", function () {
  this.timeout(120_000);
  let judge: CaseJudge;

  before(async () => {
    const ops = [...loadOperations(OPENAPI("client.yaml"), "client"), ...loadOperations(OPENAPI("management.yaml"), "mgmt")];
    const operations = new Map(ops.map((o) => [o.id, o]));
    judge = { target: await FuzzTarget.start(), operations, allDocumented: [...new Set(ops.flatMap((o) => o.statuses))] };
  });

  after(async () => judge?.target.stop());

  for (const { file, entry } of loadCorpus()) {
    it(`${file}: ${entry.problems[0]?.slice(0, 100)} — no longer happens`, async () => {
      // some failures are races (a reset that loses the answer): a few attempts make them show
      for (let attempt = 0; attempt < REPLAYS; attempt++) {
        const { problems } = await runCase(judge, entry.case, entry.family === "bomb" ? 60_000 : undefined);
        expect(problems, `attempt ${attempt + 1}`).to.deep.equal([]);
      }
    });
  }
});
