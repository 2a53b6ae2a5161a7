// The unit the auth limits count a client by: an IPv4 address alone, an IPv6 address alone by
// default or by the prefix SERVICE_AUTH_IPV6_PREFIX sets.
import { expect } from "chai";
import { clientAddressKey } from "../../../src/auth/client-address.js";

describe("auth/client-address", () => {
  it("an IPv4 address is its own key", () => {
    expect(clientAddressKey("10.0.0.1")).to.equal("10.0.0.1");
    expect(clientAddressKey("127.0.0.1", 64)).to.equal("127.0.0.1");
  });

  it("an IPv4-mapped IPv6 address counts as the IPv4 address it carries, whatever the prefix", () => {
    expect(clientAddressKey("::ffff:10.0.0.1")).to.equal("10.0.0.1");
    expect(clientAddressKey("::FFFF:192.0.2.7", 64)).to.equal("192.0.2.7");
  });

  it("by default (128) an IPv6 address counts alone: hosts of one cloud subnet do not share a budget", () => {
    expect(clientAddressKey("2001:db8:1:2::1")).to.equal("2001:db8:1:2::1");
    expect(clientAddressKey("2001:db8:1:2::2")).to.not.equal(clientAddressKey("2001:db8:1:2::1"));
  });

  it("with a prefix of 64, IPv6 addresses of one /64 share a key, whatever their spelling", () => {
    const keys = ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0db8:0001:0002:0:0:0:9", "2001:DB8:1:2::a:b", "2001:db8:1:2::1%eth0"].map((a) => clientAddressKey(a, 64));
    expect(new Set(keys)).to.deep.equal(new Set(["2001:db8:1:2:0:0:0:0/64"]));
  });

  it("with a prefix of 64, different /64s do not share one", () => {
    expect(clientAddressKey("2001:db8:1:3::1", 64)).to.equal("2001:db8:1:3:0:0:0:0/64");
    expect(clientAddressKey("2001:db8::1:2:3:4:5", 64)).to.equal("2001:db8:0:1:0:0:0:0/64");
    expect(clientAddressKey("::1", 64)).to.equal("0:0:0:0:0:0:0:0/64");
    expect(clientAddressKey("1:2:3::192.0.2.1", 64)).to.equal("1:2:3:0:0:0:0:0/64");
    expect(clientAddressKey("1:2:3:4:5:6:192.0.2.1", 64)).to.equal("1:2:3:4:0:0:0:0/64");
  });

  it("other prefixes mask within a group", () => {
    expect(clientAddressKey("2001:db8:12ff::1", 40)).to.equal("2001:db8:1200:0:0:0:0:0/40");
    expect(clientAddressKey("2001:db8:1:2:3ff::1", 72)).to.equal("2001:db8:1:2:300:0:0:0/72");
  });

  it("with a prefix shorter than 96, an address of the NAT64 prefix counts as the IPv4 address it embeds", () => {
    expect(clientAddressKey("64:ff9b::192.0.2.1", 64)).to.equal("192.0.2.1");
    expect(clientAddressKey("64:ff9b::c000:202", 64)).to.equal("192.0.2.2");
    expect(clientAddressKey("64:ff9b::192.0.2.1")).to.equal("64:ff9b::192.0.2.1");
  });

  it("what is not an address stays as it is", () => {
    expect(clientAddressKey(undefined)).to.equal("");
    expect(clientAddressKey("", 64)).to.equal("");
    expect(clientAddressKey("not:an:address", 64)).to.equal("not:an:address");
  });
});
