export type { Config, ConsistencyLevel, EvictionAlgorithm, LogLevel, OidcConfig, RateLimitConfig, SettingView, TlsFiles } from "./config.js";
export { loadConfig, type ConfigDefaults } from "./load-config.js";
export { SettingError, type Seed } from "./parsers.js";
export { SETTINGS, type SettingSpec } from "./settings.js";
export { checkPeerCredential, readTlsMaterial, sameCa, sharedCaSubject, TlsMaterialError, type TlsListener, type TlsMaterial } from "./tls-material.js";
export { fileStamps, TlsReloader, type FileStamp, type TlsCheck, type TlsReloadDeps } from "./tls-reload.js";
