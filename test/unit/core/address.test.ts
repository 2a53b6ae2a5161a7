import { expect } from "chai";
import { dialHost, formatAddress, parseAddress } from "../../../src/core/address.js";

describe("core/address", () => {
  describe("parseAddress", () => {
    const accepted: Array<[string, string, number]> = [
      ["localhost:8080", "localhost", 8080],
      ["127.0.0.1:7946", "127.0.0.1", 7946],
      ["node-1.example.com:443", "node-1.example.com", 443],
      [":8080", "", 8080],
      [":0", "", 0],
      ["host:0", "host", 0],
      ["host:65535", "host", 65535],
      ["host:00080", "host", 80],
      ["[::1]:8080", "::1", 8080],
      ["[::]:9000", "::", 9000],
      ["[fe80::1:2]:1", "fe80::1:2", 1],
      ["[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80],
      ["[2001:DB8::A]:53", "2001:DB8::A", 53],
    ];
    for (const [text, host, port] of accepted) {
      it(`parses ${JSON.stringify(text)} as host ${JSON.stringify(host)} port ${port}`, () => {
        expect(parseAddress(text)).to.deep.equal({ host, port });
      });
    }

    const rejected: Array<[string, string]> = [
      ["", "empty"],
      ["8080", "port without colon"],
      ["localhost", "host without port"],
      ["localhost:", "empty port"],
      [":", "colon only"],
      ["host:65536", "port above 65535"],
      ["host:99999", "port above 65535"],
      ["host:123456", "six-digit port"],
      ["host:-1", "negative port"],
      ["host:+80", "signed port"],
      ["host:80a", "non-numeric port"],
      ["host:abc", "non-numeric port"],
      ["host:8.0", "decimal port"],
      ["host: 80", "space before port"],
      [" host:80", "leading space"],
      ["host:80 ", "trailing space"],
      ["my host:80", "space in host"],
      ["::1:8080", "unbracketed IPv6"],
      ["[::1]", "bracketed IPv6 without port"],
      ["[::1]:", "bracketed IPv6 with empty port"],
      ["[]:80", "empty brackets"],
      ["[::1:80", "unterminated bracket"],
      ["::1]:80", "missing opening bracket"],
      ["[host.name]:80", "brackets around a name"],
      ["[fe80::1%eth0]:80", "zone identifier"],
      ["a:b:80", "two colons"],
      ["http://host:80", "URL scheme"],
    ];
    for (const [text, why] of rejected) {
      it(`rejects ${JSON.stringify(text)} (${why})`, () => {
        expect(parseAddress(text)).to.equal(undefined);
      });
    }
  });

  describe("formatAddress", () => {
    it("writes host:port, :port and [v6]:port", () => {
      expect(formatAddress({ host: "localhost", port: 8080 })).to.equal("localhost:8080");
      expect(formatAddress({ host: "", port: 8081 })).to.equal(":8081");
      expect(formatAddress({ host: "::1", port: 7946 })).to.equal("[::1]:7946");
    });

    it("round-trips every canonical text form through parseAddress", () => {
      for (const text of ["localhost:8080", ":8080", ":0", "10.0.0.1:65535", "[::1]:8080", "[::]:1", "[::ffff:127.0.0.1]:80", "a.b.c:1"]) {
        const parsed = parseAddress(text);
        expect(parsed, text).to.not.equal(undefined);
        expect(formatAddress(parsed as NonNullable<typeof parsed>)).to.equal(text);
      }
    });

    it("round-trips parsed objects: parse(format(a)) deep-equals a", () => {
      for (const a of [{ host: "h", port: 1 }, { host: "", port: 0 }, { host: "::1", port: 65535 }, { host: "fe80::2", port: 443 }]) {
        expect(parseAddress(formatAddress(a))).to.deep.equal(a);
      }
    });
  });

  describe("dialHost", () => {
    it("dials the loopback for every-interface hosts", () => {
      expect(dialHost({ host: "", port: 1 })).to.equal("127.0.0.1");
      expect(dialHost({ host: "0.0.0.0", port: 1 })).to.equal("127.0.0.1");
      expect(dialHost({ host: "::", port: 1 })).to.equal("127.0.0.1");
    });

    it("keeps a concrete host as it is", () => {
      expect(dialHost({ host: "10.1.2.3", port: 1 })).to.equal("10.1.2.3");
      expect(dialHost({ host: "::1", port: 1 })).to.equal("::1");
      expect(dialHost({ host: "node-2", port: 1 })).to.equal("node-2");
    });
  });
});
