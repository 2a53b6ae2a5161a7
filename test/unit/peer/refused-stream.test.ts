// isRefusedStream decides which failed peer calls are sent again (RFC 9113 8.7: a refused stream
// was not processed). Only Node's own http2 error counts; a peer's error text that says the same
// words must not, or a peer could make this node send a processed call (an increment) twice.
import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { CacheError } from "../../../src/core/errors.js";
import { fromConnectError, isRefusedStream, toConnectError } from "../../../src/peer/errors.js";

/** The error Node's http2 raises for a stream closed with REFUSED_STREAM. */
const nodeRefusal = () => Object.assign(new Error("Stream closed with error code NGHTTP2_REFUSED_STREAM"), { code: "ERR_HTTP2_STREAM_ERROR" });

describe("peer/errors isRefusedStream", () => {
  it("is true for Node's refusal, also wrapped by Connect and by fromConnectError", () => {
    const wrapped = new ConnectError("Stream closed with error code NGHTTP2_REFUSED_STREAM", Code.Unavailable, undefined, undefined, nodeRefusal());
    expect(isRefusedStream(nodeRefusal())).to.equal(true);
    expect(isRefusedStream(wrapped)).to.equal(true);
    expect(isRefusedStream(fromConnectError(wrapped))).to.equal(true);
  });

  it("is false for a peer's error whose text names a refusal, and for other stream errors", () => {
    const forged = new ConnectError(toConnectError(new CacheError("UNAVAILABLE", "Stream closed with error code NGHTTP2_REFUSED_STREAM")).rawMessage, Code.Unavailable);
    expect(isRefusedStream(forged)).to.equal(false);
    expect(isRefusedStream(new ConnectError("http/2 stream closed with error code REFUSED_STREAM (0x7)", Code.Unavailable))).to.equal(false);
    expect(isRefusedStream(new CacheError("UNAVAILABLE", "Stream closed with error code NGHTTP2_REFUSED_STREAM"))).to.equal(false);
    const otherReset = Object.assign(new Error("Stream closed with error code NGHTTP2_INTERNAL_ERROR"), { code: "ERR_HTTP2_STREAM_ERROR" });
    expect(isRefusedStream(otherReset)).to.equal(false);
    expect(isRefusedStream(undefined)).to.equal(false);
  });
});
