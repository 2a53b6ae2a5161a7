// The management listener's GET /cluster/keys serves the client listener's key browser through
// the same code: its parameters and answer schema in openapi/management.yaml must stay those of
// GET /v1/cache/keys in openapi/client.yaml.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { parse as parseYaml } from "yaml";

interface Doc {
  paths: Record<string, { get?: { parameters?: unknown[]; responses?: Record<string, unknown> } }>;
  components: { schemas: Record<string, unknown> };
}

const load = (file: string) => parseYaml(readFileSync(new URL(`../../openapi/${file}`, import.meta.url), "utf8")) as Doc;

describe("key browser in both OpenAPI documents", () => {
  const client = load("client.yaml");
  const mgmt = load("management.yaml");

  it("GET /cluster/keys takes exactly the parameters of GET /v1/cache/keys", () => {
    const want = client.paths["/v1/cache/keys"]?.get?.parameters;
    expect(want).to.be.an("array").with.length(4);
    expect(mgmt.paths["/cluster/keys"]?.get?.parameters).to.deep.equal(want);
  });

  it("answers the same KeyBrowserPage schema and the same statuses", () => {
    expect(mgmt.components.schemas.KeyBrowserPage).to.deep.equal(client.components.schemas.KeyBrowserPage);
    expect(Object.keys(mgmt.paths["/cluster/keys"]?.get?.responses ?? {}).sort()).to.deep.equal(Object.keys(client.paths["/v1/cache/keys"]?.get?.responses ?? {}).sort());
  });
});
