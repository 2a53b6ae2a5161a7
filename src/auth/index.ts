export {
  SCOPES, CAPABILITIES, anonymousIdentity, capabilitiesOf, hasCapability, isCapability, isScope, makeIdentity, requireScope,
  ANONYMOUS_ID, type Capability, type Identity, type IdentityKind, type Scope,
} from "./identity.js";
export { openAuthenticator, type Authenticator, type AuthMethod } from "./authenticator.js";
export { createAuthenticator, SHARED_TOKEN_ID, type AuthDeps, type AuthSettings } from "./create-authenticator.js";
export { PolicyFileError } from "./policy-file.js";
export { OidcSetupError } from "./oidc-verifier.js";
export { RateLimiter, rateLimited, RATE_LIMIT_BUCKETS_MAX, type RateLimitSettings } from "./rate-limiter.js";
export type { RateLimitOverride } from "./identity.js";
