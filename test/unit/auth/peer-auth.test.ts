import { expect } from "chai";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createPeerAuth, InsecureAuthConfigError, secretsEqual } from "../../../src/peer/peer-auth.js";

const passThrough: Interceptor = (next) => (req) => next(req);

/** Runs an interceptor chain on a fake request carrying `authorization`. */
async function callThrough(interceptors: readonly Interceptor[], authorization?: string): Promise<string> {
  const header = new Headers();
  if (authorization !== undefined) header.set("authorization", authorization);
  let next = (async () => ({ message: "ok" })) as unknown as Parameters<Interceptor>[0];
  for (const i of [...interceptors].reverse()) next = i(next);
  try {
    await next({ header } as never);
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code === Code.Unauthenticated ? "unauthenticated" : String(err);
  }
}

describe("peer/peer-auth createPeerAuth", () => {
  it("rejects outbound signing without an inbound verifier: insecure auth config", () => {
    expect(() => createPeerAuth({ outboundToken: "t" })).to.throw(InsecureAuthConfigError, "insecure auth config");
    expect(() => createPeerAuth({ outboundSigner: passThrough })).to.throw(InsecureAuthConfigError, "insecure auth config");
    expect(() => createPeerAuth({ outboundToken: "t", allowAnonymousInbound: false })).to.throw("insecure auth config");
  });

  it("accepts outbound signing without a verifier only when anonymous inbound access is explicitly allowed", () => {
    const a = createPeerAuth({ outboundToken: "t", allowAnonymousInbound: true });
    expect(a.outbound).to.have.length(1);
    expect(a.inbound).to.have.length(0);
  });

  it("accepts signing with a verifier, a verifier alone, and neither (an open peer transport)", () => {
    expect(createPeerAuth({ outboundToken: "t", inboundToken: "t" }).inbound).to.have.length(1);
    expect(createPeerAuth({ outboundSigner: passThrough, inboundVerifier: passThrough }).outbound).to.have.length(1);
    expect(createPeerAuth({ inboundToken: "t" }).outbound).to.have.length(0);
    expect(createPeerAuth({})).to.deep.equal({ inbound: [], outbound: [] });
  });

  it("the inbound token check refuses a missing or wrong token and accepts the right one", async () => {
    const { inbound } = createPeerAuth({ outboundToken: "peer-secret", inboundToken: "peer-secret" });
    expect(await callThrough(inbound)).to.equal("unauthenticated");
    expect(await callThrough(inbound, "Bearer wrong")).to.equal("unauthenticated");
    expect(await callThrough(inbound, "Bearer peer-secret-and-more")).to.equal("unauthenticated");
    expect(await callThrough(inbound, "Basic cGVlcjpzZWNyZXQ=")).to.equal("unauthenticated");
    expect(await callThrough(inbound, "Bearer peer-secret")).to.equal("ok");
  });

  it("the outbound signer adds the bearer token the inbound check accepts", async () => {
    const { inbound, outbound } = createPeerAuth({ outboundToken: "peer-secret", inboundToken: "peer-secret" });
    expect(await callThrough([...outbound, ...inbound])).to.equal("ok");
  });

  it("secretsEqual is equality for secrets of any length", () => {
    expect(secretsEqual("a", "a")).to.equal(true);
    expect(secretsEqual("a", "b")).to.equal(false);
    expect(secretsEqual("short", "a much longer secret")).to.equal(false);
    expect(secretsEqual("", "")).to.equal(true);
  });
});
