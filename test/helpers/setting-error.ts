// The SettingError a configuration load throws (a test fails when it loads, or throws another error).
import { SettingError } from "../../src/config/parsers.js";

export function settingErrorOf(load: () => unknown): SettingError {
  try {
    load();
  } catch (err) {
    if (err instanceof SettingError) return err;
    throw err;
  }
  throw new Error("the configuration loaded without a SettingError");
}
