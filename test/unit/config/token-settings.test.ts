// SERVICE_AUTH_TOKEN and SERVICE_PEER_TOKEN travel as "Authorization: Bearer <token>", so they
// follow the policy file's rule for tokens: visible ASCII without spaces. A value that cannot be
// sent is refused at load with a SettingError naming the variable (exit 2 at boot), and the
// message never echoes the secret.
import { expect } from "chai";
import { loadConfig } from "../../../src/config/load-config.js";
import { settingErrorOf } from "../../helpers/setting-error.js";

const load = (env: Record<string, string>) => loadConfig(env, { hostname: "host-a" });

const settingError = (env: Record<string, string>) => settingErrorOf(() => load(env));

const BAD = [
  ["a b", "a space inside"],
  ["tökén", "non-ASCII letters"],
  [" padded ", "spaces around"],
  ["tab\there", "a tab"],
  ["new\nline", "a line break"],
  ["\u007f", "a control character (DEL)"],
] as const;

describe("config/load-config: token settings", () => {
  for (const variable of ["SERVICE_AUTH_TOKEN", "SERVICE_PEER_TOKEN"]) {
    for (const [value, why] of BAD) {
      it(`${variable}=${JSON.stringify(value)} (${why}) is refused, naming the variable and not echoing the value`, () => {
        const e = settingError({ [variable]: value });
        expect(e.variable).to.equal(variable);
        expect(e.message).to.match(new RegExp(`^${variable}: .*visible ASCII`));
        expect(e.message).to.not.include(value.trim());
      });
    }
  }

  it("accepts visible ASCII tokens, punctuation included", () => {
    const token = "Ab0-._~+/=!#$%&'*^`|:;<>?@[]{}()";
    const c = load({ SERVICE_AUTH_TOKEN: token, SERVICE_PEER_TOKEN: "p" });
    expect(c.authToken).to.equal(token);
    expect(c.peerToken).to.equal("p");
  });
});
