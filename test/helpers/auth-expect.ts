// Assertions shared by the auth integration tests: the 401 and 403 answers a user sees.
import { expect } from "chai";
import type { Reply } from "./http-call.js";

/** 401 UNAUTHORIZED: the JSON envelope (no body for HEAD) and a WWW-Authenticate challenge. */
export function expectUnauthorized(r: Reply, what = "", head = false): void {
  expect(r.status, `${what}: ${r.body.toString()}`).to.equal(401);
  expect(r.headers["www-authenticate"], what).to.be.a("string").and.match(/^(Bearer|Basic) realm="hypercache"/);
  if (head) return;
  expect(r.headers["content-type"], what).to.match(/^application\/json/);
  const body = r.json<{ error: string; code: string }>();
  expect(body.code, what).to.equal("UNAUTHORIZED");
  expect(body.error, what).to.be.a("string").and.not.equal("");
}

/** 403 FORBIDDEN: the JSON envelope (no body for HEAD), no challenge. */
export function expectForbidden(r: Reply, what = "", head = false): void {
  expect(r.status, `${what}: ${r.body.toString()}`).to.equal(403);
  expect(r.headers["www-authenticate"], what).to.equal(undefined);
  if (head) return;
  const body = r.json<{ error: string; code: string }>();
  expect(body.code, what).to.equal("FORBIDDEN");
}

/** Neither 401 nor 403 (and no 5xx): the request passed authentication and authorization. */
export function expectAllowed(r: Reply, what = ""): void {
  expect(r.status, `${what}: ${r.body.toString()}`).to.be.oneOf([200, 400, 404]);
}
