// SERVICE_API_ADVERTISE_URL and SERVICE_MGMT_ADVERTISE_URL: the defaults (scheme by TLS, the dist
// host, the listener's port), explicit values normalised, and bad values refused by name.
import { expect } from "chai";
import { loadConfig } from "../../../src/config/load-config.js";
import { SettingError } from "../../../src/config/parsers.js";

const load = (env: Record<string, string>) => loadConfig(env, { hostname: "host-a" });
const view = (env: Record<string, string>, name: string) => load(env).settings.find((s) => s.name === name);

describe("config: advertised client and management URLs", () => {
  it("default to http, the host of SERVICE_DIST_ADDR and each listener's port, shown by /config", () => {
    const c = load({ SERVICE_DIST_ADDR: "10.0.0.7:7946", SERVICE_API_ADDR: ":9000", SERVICE_MGMT_ADDR: "0.0.0.0:9001" });
    expect(c.apiAdvertiseUrl).to.equal("http://10.0.0.7:9000");
    expect(c.mgmtAdvertiseUrl).to.equal("http://10.0.0.7:9001");
    expect(view({ SERVICE_DIST_ADDR: "10.0.0.7:7946" }, "SERVICE_API_ADVERTISE_URL")).to.deep.equal({ name: "SERVICE_API_ADVERTISE_URL", value: "http://10.0.0.7:8080", source: "default" });
  });

  it("default to https on a listener that serves TLS, and bracket an IPv6 dist host", () => {
    const c = load({ SERVICE_DIST_ADDR: "[fd00::5]:7946", SERVICE_API_TLS_CERT: "c.pem", SERVICE_API_TLS_KEY: "k.pem" });
    expect(c.apiAdvertiseUrl).to.equal("https://[fd00::5]:8080");
    expect(c.mgmtAdvertiseUrl).to.equal("http://[fd00::5]:8081");
    const m = load({ SERVICE_DIST_ADDR: "cache-1.internal:7946", SERVICE_MGMT_TLS_CERT: "c.pem", SERVICE_MGMT_TLS_KEY: "k.pem" });
    expect(m.mgmtAdvertiseUrl).to.equal("https://cache-1.internal:8081");
  });

  it("have no default when the dist host is unspecified (nothing to advertise)", () => {
    for (const dist of [":7946", "0.0.0.0:7946", "[::]:7946", "0:7946", "[::0]:7946", "[0:0::0]:7946"]) {
      const c = load({ SERVICE_DIST_ADDR: dist });
      expect(c.apiAdvertiseUrl, dist).to.equal(undefined);
      expect(c.mgmtAdvertiseUrl, dist).to.equal(undefined);
    }
  });

  it("take an explicit base URL as given, without a trailing slash", () => {
    const c = load({ SERVICE_API_ADVERTISE_URL: "https://cache.example.com/node-1/", SERVICE_MGMT_ADVERTISE_URL: "http://mgmt.example:81" });
    expect(c.apiAdvertiseUrl).to.equal("https://cache.example.com/node-1");
    expect(c.mgmtAdvertiseUrl).to.equal("http://mgmt.example:81");
  });

  it("refuse anything but an absolute http(s) base URL, naming the variable", () => {
    for (const bad of ["cache-1:8080", "ftp://x", "https://", "https://u:p@x", "http://x/?a=1", "http://x/#f", "/relative"]) {
      for (const name of ["SERVICE_API_ADVERTISE_URL", "SERVICE_MGMT_ADVERTISE_URL"]) {
        let caught: unknown;
        try {
          load({ [name]: bad });
        } catch (err) {
          caught = err;
        }
        expect(caught, `${name}=${bad}`).to.be.instanceOf(SettingError);
        expect((caught as SettingError).message).to.match(new RegExp(`^${name}: expected an absolute http\\(s\\) base URL`));
      }
    }
  });
});
