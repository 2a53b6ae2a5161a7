import { expect } from "chai";
import { QUOTED_KEY_CHARS_MAX, quotedKey } from "../../../src/core/key-check.js";

describe("core/key-check quotedKey", () => {
  it("quotes a short key whole, as JSON", () => {
    expect(quotedKey("user:1")).to.equal('"user:1"');
    expect(quotedKey('a"b')).to.equal('"a\\"b"');
    expect(quotedKey("k".repeat(QUOTED_KEY_CHARS_MAX))).to.equal(`"${"k".repeat(QUOTED_KEY_CHARS_MAX)}"`);
  });

  it("cuts a longer key to its first QUOTED_KEY_CHARS_MAX characters and says how long it is", () => {
    expect(quotedKey("k".repeat(5000))).to.equal(`"${"k".repeat(QUOTED_KEY_CHARS_MAX)}"… (5000 characters)`);
    // However the key escapes, the quote stays bounded.
    expect(quotedKey('"'.repeat(4096)).length).to.be.below(2 * QUOTED_KEY_CHARS_MAX + 40);
    expect(quotedKey("\u0001".repeat(4096)).length).to.be.below(6 * QUOTED_KEY_CHARS_MAX + 40);
  });
});
