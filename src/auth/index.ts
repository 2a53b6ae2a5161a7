export {
  SCOPES, CAPABILITIES, anonymousIdentity, capabilitiesOf, hasCapability, isCapability, isScope, makeIdentity, requireScope,
  type Capability, type Identity, type Scope,
} from "./identity.js";
export { openAuthenticator, type Authenticator } from "./authenticator.js";
