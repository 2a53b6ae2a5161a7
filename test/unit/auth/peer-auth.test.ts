import { expect } from "chai";
import type { Interceptor } from "@connectrpc/connect";
import { bearerToken, peerTokenSigner, secretsEqual } from "../../../src/peer/peer-auth.js";

describe("peer/peer-auth", () => {
  it("the outbound signer adds `Authorization: Bearer <token>` to every call", async () => {
    const header = new Headers();
    const next = (async () => ({ message: "ok" })) as unknown as Parameters<Interceptor>[0];
    await peerTokenSigner("peer-secret")(next)({ header } as never);
    expect(header.get("authorization")).to.equal("Bearer peer-secret");
  });

  it("bearerToken reads the token of a Bearer header only", () => {
    expect(bearerToken("Bearer abc")).to.equal("abc");
    expect(bearerToken("bearer abc ")).to.equal("abc");
    expect(bearerToken("Basic abc")).to.equal(undefined);
    expect(bearerToken("Bearer a b")).to.equal(undefined);
    expect(bearerToken(undefined)).to.equal(undefined);
  });

  it("secretsEqual is equality for secrets of any length", () => {
    expect(secretsEqual("a", "a")).to.equal(true);
    expect(secretsEqual("a", "b")).to.equal(false);
    expect(secretsEqual("short", "a much longer secret")).to.equal(false);
    expect(secretsEqual("", "")).to.equal(true);
  });
});
