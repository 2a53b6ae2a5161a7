import { expect } from "chai";
import { CacheError } from "../../../src/core/errors.js";
import { JsonBodyScanner, type JsonScanLimits } from "../../../src/http/json-body-scanner.js";

const LIMITS: JsonScanLimits = { field: "items", itemsMax: 3, depthMax: 8, structureMax: 100 };

/** Scans `body` in chunks of `chunk` bytes; returns the element count or the thrown 400. */
function scan(body: string, limits: Partial<JsonScanLimits> = {}, chunk = 1): number | CacheError {
  const s = new JsonBodyScanner({ ...LIMITS, ...limits });
  const bytes = Buffer.from(body, "utf8");
  try {
    for (let i = 0; i < bytes.length; i += chunk) s.push(bytes.subarray(i, i + chunk));
    return s.count;
  } catch (err) {
    if (err instanceof CacheError) return err;
    throw err;
  }
}

function expect400(r: number | CacheError, message: RegExp, details: Record<string, unknown>): void {
  expect(r).to.be.instanceOf(CacheError);
  const e = r as CacheError;
  expect(e.status).to.equal(400);
  expect(e.message).to.match(message);
  expect(e.details).to.deep.equal(details);
}

describe("http/json-body-scanner", () => {
  describe("counts the elements of the top-level member's array, whatever the chunking", () => {
    const cases: Array<[string, string, number]> = [
      ["empty array", '{"items":[]}', 0],
      ["spaces in the empty array", '{"items":[ \n\t ]}', 0],
      ["objects", '{"items":[{"key":"a","value":"1"},{"key":"b","value":"2"}]}', 2],
      ["strings holding commas, brackets and quotes", '{"items":["a,b]", "c\\"],[", "\\\\"]}', 3],
      ["nested arrays count once", '{"items":[[1,2,3,4,5],[6,7]]}', 2],
      ["another member's array is not counted", '{"other":[1,2,3,4,5,6],"items":[1]}', 1],
      ["the field named inside an element is not the top-level member", '{"x":{"items":[1,2,3,4,5]},"items":[1,2]}', 2],
      ["a string value named like the field is not a name", '{"name":"items","items":[1]}', 1],
      ["an escaped member name", '{"\\u0069tems":[1,2]}', 2],
      ["multi-byte UTF-8 in values", '{"items":["é,ü","日本,語"]}', 2],
    ];
    for (const [what, body, count] of cases) {
      it(`${what}: ${count}`, () => {
        for (const chunk of [1, 2, 7, body.length]) expect(scan(body, {}, chunk), `chunks of ${chunk}`).to.equal(count);
      });
    }
  });

  it("refuses the element past the limit with 400 and details.max_items, before the rest arrives", () => {
    const s = new JsonBodyScanner(LIMITS);
    s.push(Buffer.from('{"items":[{},{},{}'));
    expect(() => s.push(Buffer.from(",{"))).to.throw(CacheError, /at most 3 items per batch call/);
    expect400(scan('{"items":[{},{},{},{}]}'), /at most 3 items per batch call; got more/, { max_items: 3 });
    expect400(scan('{"keys":["a","b","c","d"]}', { field: "keys" }), /at most 3 keys per batch call/, { max_items: 3 });
  });

  it("a body of the limit exactly passes", () => {
    expect(scan('{"items":[{},{},{}]}')).to.equal(3);
  });

  it("refuses nesting past depthMax with 400 and details.max_depth", () => {
    expect(scan(`${"[".repeat(8)}${"]".repeat(8)}`)).to.equal(0);
    expect400(scan("[".repeat(9)), /deeper than 8 levels/, { max_depth: 8 });
    expect400(scan(`{"items":[${"{\"a\":".repeat(8)}1`), /deeper than 8 levels/, { max_depth: 8 });
  });

  it("bounds the structure of the whole body, also outside the counted array", () => {
    expect400(scan(`{"junk":[${"{},".repeat(60)}{}]}`), /more JSON structure than a batch of 3 items needs/, { max_structure: 100 });
    expect400(scan(`[${"{},".repeat(60)}{}]`), /more JSON structure/, { max_structure: 100 });
  });

  it("counts in one pass over a 16 MiB body of one string value in well under a second", () => {
    const body = Buffer.from(`{"items":[{"key":"k","value":"${"x".repeat(16 * 1024 * 1024)}"}]}`);
    const s = new JsonBodyScanner(LIMITS);
    const started = performance.now();
    for (let i = 0; i < body.length; i += 65_536) s.push(body.subarray(i, i + 65_536));
    expect(s.count).to.equal(1);
    expect(performance.now() - started).to.be.below(1000);
  });
});
