// The unit the auth limits count a client by: an IPv4 address alone, an IPv6 address by its /64.
import { expect } from "chai";
import { clientAddressKey } from "../../../src/auth/client-address.js";

describe("auth/client-address", () => {
  it("an IPv4 address is its own key", () => {
    expect(clientAddressKey("10.0.0.1")).to.equal("10.0.0.1");
    expect(clientAddressKey("127.0.0.1")).to.equal("127.0.0.1");
  });

  it("an IPv4-mapped IPv6 address counts as the IPv4 address it carries", () => {
    expect(clientAddressKey("::ffff:10.0.0.1")).to.equal("10.0.0.1");
    expect(clientAddressKey("::FFFF:192.0.2.7")).to.equal("192.0.2.7");
  });

  it("IPv6 addresses of one /64 share a key, whatever their spelling", () => {
    const keys = ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0db8:0001:0002:0:0:0:9", "2001:DB8:1:2::a:b", "2001:db8:1:2::1%eth0"].map(clientAddressKey);
    expect(new Set(keys)).to.deep.equal(new Set(["2001:db8:1:2::/64"]));
  });

  it("IPv6 addresses of different /64s do not", () => {
    expect(clientAddressKey("2001:db8:1:3::1")).to.equal("2001:db8:1:3::/64");
    expect(clientAddressKey("2001:db8::1")).to.equal("2001:db8:0:0::/64");
    expect(clientAddressKey("2001:db8::1:2:3:4:5")).to.equal("2001:db8:0:1::/64");
    expect(clientAddressKey("::1")).to.equal("0:0:0:0::/64");
    expect(clientAddressKey("fe80::1:2:3:4")).to.equal("fe80:0:0:0::/64");
    expect(clientAddressKey("64:ff9b::192.0.2.1")).to.equal("64:ff9b:0:0::/64");
    expect(clientAddressKey("1:2:3::192.0.2.1")).to.equal("1:2:3:0::/64");
    expect(clientAddressKey("1:2:3:4:5:6:192.0.2.1")).to.equal("1:2:3:4::/64");
  });

  it("what is not an address stays as it is (the socket gave it; nothing is lost by not grouping it)", () => {
    expect(clientAddressKey(undefined)).to.equal("");
    expect(clientAddressKey("")).to.equal("");
    expect(clientAddressKey("not:an:address")).to.equal("not:an:address");
  });
});
