// The OIDC discovery document decides where the client secret goes: it must come from the issuer
// it names (`issuer` equal to the configured one), and an https issuer's token endpoint must be
// https, or no secret is sent.
import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { OIDC_ANSWER_BYTES_MAX, OIDC_REQUEST_TIMEOUT_MS, OidcClientCredentials, TokenRequestError } from "../../src/oidc-client-credentials.js";
import { answer, FakeFetch, outcome, settle, stalledAnswer } from "./fake-fetch.js";

const ISSUER = "https://issuer:1";

function oidc(doc: Record<string, unknown>, issuer = ISSUER) {
  const f = new FakeFetch()
    .on(issuer, (call) => (call.url.endsWith("/token") ? answer(200, { access_token: "t", token_type: "Bearer" }) : answer(200, doc)))
    .on("http://evil:1", () => answer(200, { access_token: "t", token_type: "Bearer" }));
  const clock = new ManualClock();
  return { f, o: new OidcClientCredentials({ issuer, clientId: "svc", clientSecret: "s3cret" }, { fetch: f.fetch, clock, timers: clock }) };
}

describe("client OIDC discovery", () => {
  it("refuses an http token endpoint named by an https issuer: the secret is never sent", async () => {
    const { f, o } = oidc({ issuer: ISSUER, token_endpoint: "http://evil:1/token" });
    const err = await o.authorization().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TokenRequestError);
    expect((err as Error).message).to.match(/https/);
    expect(f.to("http://evil:1")).to.have.length(0);
  });

  it("refuses a document whose issuer is not the configured one", async () => {
    for (const doc of [{ issuer: "https://other:1", token_endpoint: `${ISSUER}/token` }, { token_endpoint: `${ISSUER}/token` }]) {
      const { f, o } = oidc(doc);
      expect(await o.authorization().catch((e: unknown) => e)).to.be.instanceOf(TokenRequestError);
      expect(f.calls.filter((c) => c.init.method === "POST")).to.have.length(0);
    }
  });

  it("takes a matching document's https token endpoint (a trailing slash on either side is the same issuer)", async () => {
    const { o } = oidc({ issuer: `${ISSUER}/`, token_endpoint: `${ISSUER}/token` });
    expect(await o.authorization()).to.equal("Bearer t");
  });
});

describe("client OIDC requests against hostile issuers", () => {
  it("a token answer whose body never ends fails at the request time limit with TokenRequestError", async () => {
    const f = new FakeFetch().on(ISSUER, () => stalledAnswer(200, { "content-type": "application/json" }));
    const clock = new ManualClock();
    const o = new OidcClientCredentials({ tokenUrl: `${ISSUER}/token`, clientId: "svc", clientSecret: "s3cret" }, { fetch: f.fetch, clock, timers: clock });
    const token = o.authorization();
    await settle();
    clock.advance(OIDC_REQUEST_TIMEOUT_MS);
    const r = await outcome(token);
    expect(r.state).to.equal("rejected");
    expect((r as { error: unknown }).error).to.be.instanceOf(TokenRequestError);
  });

  it("a token answer over OIDC_ANSWER_BYTES_MAX is refused unread", async () => {
    const big = { ...answer(200, { access_token: "t" }), headers: { get: (n: string) => (n === "content-length" ? String(OIDC_ANSWER_BYTES_MAX + 1) : n === "content-type" ? "application/json" : null) } };
    const f = new FakeFetch().on(ISSUER, () => big);
    const clock = new ManualClock();
    const o = new OidcClientCredentials({ tokenUrl: `${ISSUER}/token`, clientId: "svc", clientSecret: "s3cret" }, { fetch: f.fetch, clock, timers: clock });
    expect(await o.authorization().catch((e: unknown) => e)).to.be.instanceOf(TokenRequestError);
  });

  it("a compressed token answer is bounded as decoded: a small Content-Length (the compressed size) does not let a larger body through", async () => {
    const text = JSON.stringify({ access_token: "t", token_type: "Bearer", pad: "x".repeat(OIDC_ANSWER_BYTES_MAX) });
    const decoded = new TextEncoder().encode(text);
    const headers: Record<string, string> = { "content-type": "application/json", "content-encoding": "gzip", "content-length": "900" };
    const body = new ReadableStream<Uint8Array>({
      start(ctrl) {
        ctrl.enqueue(decoded);
        ctrl.close();
      },
    });
    const gzipped = { ...answer(200, text), headers: { get: (n: string) => headers[n.toLowerCase()] ?? null }, body, arrayBuffer: async () => decoded.slice().buffer };
    const f = new FakeFetch().on(ISSUER, () => gzipped);
    const clock = new ManualClock();
    const o = new OidcClientCredentials({ tokenUrl: `${ISSUER}/token`, clientId: "svc", clientSecret: "s3cret" }, { fetch: f.fetch, clock, timers: clock });
    expect(await o.authorization().catch((e: unknown) => e)).to.be.instanceOf(TokenRequestError);
  });
});
