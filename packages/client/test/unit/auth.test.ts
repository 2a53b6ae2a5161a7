import { expect } from "chai";
import { ManualClock } from "../../../../test/helpers/manual-clock.js";
import { HypercacheClient as BrowserClient } from "../../src/browser.js";
import { HypercacheClient } from "../../src/index.js";
import { ClientConfigError } from "../../src/errors.js";
import { OidcClientCredentials, TokenRequestError } from "../../src/oidc-client-credentials.js";
import { seededRandom } from "../../src/runtime.js";
import { answer, FakeFetch, outcome, settle, stalledAnswer } from "./fake-fetch.js";

const ME = { id: "u", scopes: ["read"], capabilities: ["cache.read"] };

function make(f: FakeFetch, extra: Partial<ConstructorParameters<typeof HypercacheClient>[0]>, endpoints = ["https://a:1"]) {
  const clock = new ManualClock();
  return new HypercacheClient({ endpoints, fetch: f.fetch, randomStart: false, discovery: false, runtime: { clock, timers: clock, random: seededRandom(1) }, ...extra });
}

describe("client credentials", () => {
  it("sends a static bearer token, and asks a token provider again for every request", async () => {
    const f = new FakeFetch().on("https://a:1", () => answer(200, ME));
    await make(f, { token: "t0k" }).me();
    let n = 0;
    const c = make(f, { token: async () => `dyn-${++n}` });
    await c.me();
    await c.me();
    expect(f.calls.map((x) => x.init.headers.authorization)).to.deep.equal(["Bearer t0k", "Bearer dyn-1", "Bearer dyn-2"]);
  });

  it("sends Basic credentials over https", async () => {
    const f = new FakeFetch().on("https://a:1", () => answer(200, ME));
    await make(f, { basic: { username: "ops", password: "pä:ss" } }).me();
    expect(f.calls[0]?.init.headers.authorization).to.equal(`Basic ${btoa(String.fromCharCode(...new TextEncoder().encode("ops:pä:ss")))}`);
  });

  it("refuses Basic credentials over plain http unless allowInsecureBasic", async () => {
    const f = new FakeFetch().on("http://a:1", () => answer(200, ME));
    expect(() => make(f, { basic: { username: "u", password: "p" } }, ["https://b:1", "http://a:1"])).to.throw(ClientConfigError, /plain http/);
    await make(f, { basic: { username: "u", password: "p" }, allowInsecureBasic: true }, ["http://a:1"]).me();
    expect(f.calls).to.have.length(1);
  });

  it("refuses more than one kind of credential", () => {
    expect(() => make(new FakeFetch(), { token: "a", basic: { username: "u", password: "p" } })).to.throw(ClientConfigError, /one of/);
  });
});

describe("client OIDC client credentials", () => {
  const ISSUER = "http://issuer:1";
  function issuer(lifetimeS = 100) {
    let n = 0;
    const f = new FakeFetch().on(ISSUER, (call) => {
      if (call.url.endsWith("/.well-known/openid-configuration")) return answer(200, { issuer: ISSUER, token_endpoint: `${ISSUER}/token` });
      return answer(200, { access_token: `at-${++n}`, token_type: "Bearer", expires_in: lifetimeS });
    });
    const clock = new ManualClock();
    const oidc = new OidcClientCredentials({ issuer: ISSUER, clientId: "svc", clientSecret: "s3cret", scope: "read write" }, { fetch: f.fetch, clock, timers: clock });
    return { f, clock, oidc };
  }

  it("finds the token endpoint by discovery and sends the client credentials grant with client_secret_basic", async () => {
    const { f, oidc } = issuer();
    expect(await oidc.authorization()).to.equal("Bearer at-1");
    const post = f.calls[1];
    expect(post?.url).to.equal(`${ISSUER}/token`);
    expect(post?.init.headers.authorization).to.equal(`Basic ${btoa("svc:s3cret")}`);
    expect(Object.fromEntries(new URLSearchParams(new TextDecoder().decode(post?.bodyBytes)))).to.deep.equal({ grant_type: "client_credentials", scope: "read write" });
  });

  it("reuses the token until 80% of its lifetime, then refreshes it in the background: the valid token serves until the new one came", async () => {
    const { oidc, clock } = issuer(100);
    expect(await oidc.authorization()).to.equal("Bearer at-1");
    clock.advance(79_999);
    expect(await oidc.authorization()).to.equal("Bearer at-1");
    expect(oidc.requests).to.equal(1);
    clock.advance(1);
    expect(await oidc.authorization(), "the refresh started; the valid token serves").to.equal("Bearer at-1");
    await settle();
    expect(await oidc.authorization()).to.equal("Bearer at-2");
    expect(oidc.requests).to.equal(2);
  });

  it("an issuer that hangs past 80% holds up no call: each gets the valid token at once, one refresh is in flight, and once the token expires calls wait for a new one", async () => {
    const { f, oidc, clock } = issuer(300);
    await oidc.authorization();
    f.on(ISSUER, () => stalledAnswer(200, { "content-type": "application/json" }));
    clock.advance(250_000);
    for (let i = 0; i < 3; i++) {
      const r = await outcome(oidc.authorization());
      expect(r, `call ${i}`).to.deep.equal({ state: "resolved", value: "Bearer at-1" });
    }
    expect(oidc.requests, "one refresh in flight").to.equal(2);
    clock.advance(50_000); // expired; the hung refresh times out at OIDC_REQUEST_TIMEOUT_MS meanwhile
    await settle();
    const waiting = oidc.authorization();
    waiting.catch(() => undefined);
    expect((await outcome(waiting)).state, "no valid token: the call waits for the issuer").to.equal("pending");
  });

  it("fetches one token for many concurrent requests (single flight)", async () => {
    const { oidc } = issuer();
    const headers = await Promise.all(Array.from({ length: 20 }, () => oidc.authorization()));
    expect(new Set(headers)).to.deep.equal(new Set(["Bearer at-1"]));
    expect(oidc.requests).to.equal(1);
  });

  it("keeps using a still-valid token when the refresh at 80% fails", async () => {
    const { f, oidc, clock } = issuer(100);
    await oidc.authorization();
    f.on(ISSUER, () => answer(503, "down"));
    clock.advance(90_000);
    expect(await oidc.authorization()).to.equal("Bearer at-1");
    await settle(); // the background refresh is answered 503
    expect(await oidc.authorization(), "a failed refresh: the valid token still serves").to.equal("Bearer at-1");
    clock.advance(10_000);
    const err = await oidc.authorization().catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TokenRequestError).and.have.property("status", 503);
  });

  it("drops a token a node refused (401) and fetches a new one for the retry", async () => {
    const { oidc } = issuer();
    const first = await oidc.authorization();
    expect(await oidc.refreshAfterUnauthorized(first)).to.equal(true);
    expect(await oidc.authorization()).to.equal("Bearer at-2");
  });

  it("retries a request once with a fresh token after a node answered 401", async () => {
    const { f } = issuer();
    let accepted = "Bearer at-2";
    f.on("https://a:1", (call) => (call.init.headers.authorization === accepted ? answer(200, ME) : answer(401, { error: "expired", code: "UNAUTHORIZED" })));
    const clock = new ManualClock();
    const c = new HypercacheClient({ endpoints: ["https://a:1"], fetch: f.fetch, discovery: false, runtime: { clock, timers: clock }, oidc: { issuer: ISSUER, clientId: "svc", clientSecret: "s3cret" } });
    expect(await c.me()).to.deep.equal(ME);
    expect(f.to("https://a:1").map((x) => x.init.headers.authorization)).to.deep.equal(["Bearer at-1", "Bearer at-2"]);
    accepted = "none";
    expect(await c.me().catch((e: unknown) => (e as Error).name)).to.equal("UnauthorizedError");
  });

  it("the browser build refuses the oidc option (a page cannot keep a client secret) before anything is sent; a token works there", () => {
    const f = new FakeFetch();
    const make = (o: object) => () => new BrowserClient({ endpoints: ["https://a:1"], fetch: f.fetch, discovery: false, ...o });
    expect(make({ oidc: { issuer: ISSUER, clientId: "svc", clientSecret: "s3cret" } })).to.throw(ClientConfigError, /browser build/);
    expect(make({ token: "t" })).not.to.throw();
    expect(f.calls).to.have.length(0);
  });
});
