// The README's configuration table is generated from the settings table; this keeps it true.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { configTableMarkdown } from "../../../scripts/config-table.js";
import { SETTINGS } from "../../../src/config/index.js";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

describe("README configuration table", () => {
  it("holds exactly the generated table (run scripts/config-table.ts after changing a setting)", () => {
    expect(readme).to.include(configTableMarkdown());
  });

  it("names every SERVICE_* variable the service reads, once", () => {
    for (const s of SETTINGS) {
      const rows = readme.split("\n").filter((l) => l.startsWith(`| \`${s.name}\` |`));
      expect(rows, s.name).to.have.length(1);
    }
  });

  it("shows the two set-up commands and the test command", () => {
    expect(readme).to.include("npm ci && npm start");
    expect(readme).to.include("npm test");
  });
});
