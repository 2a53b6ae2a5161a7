// Configs for tests: the defaults, overridden by SERVICE_* values.
import { loadConfig, type Config } from "../../src/config/index.js";

/** A Config from the defaults plus `env` overrides (SERVICE_* names). */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ SERVICE_NODE_ID: "test-node", ...env }, { hostname: "test-host" });
}
