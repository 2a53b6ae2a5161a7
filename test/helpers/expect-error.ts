// Assertions on thrown CacheErrors.
import { expect } from "chai";
import { CacheError } from "../../src/core/errors.js";

/** Runs `fn`, expects it to throw a 400 BAD_REQUEST CacheError (matching `message` if given), returns it. */
export function expectBadRequest(fn: () => unknown, message?: RegExp): CacheError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, "should throw").to.be.instanceOf(CacheError);
  const e = caught as CacheError;
  expect(e.code).to.equal("BAD_REQUEST");
  expect(e.status).to.equal(400);
  if (message) expect(e.message).to.match(message);
  return e;
}
