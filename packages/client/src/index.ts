// @hypercache/client: the platform-neutral core (Node, any runtime with fetch, and browsers through
// the prebuilt @hypercache/client/browser, which leaves out OAuth client credentials). Client
// certificates and the undici connection pool are in `@hypercache/client/node`.
export * from "./exports.js";
export { HypercacheClient } from "./client-with-oidc.js";
export { OidcClientCredentials, TokenRequestError, OIDC_REFRESH_FRACTION, type OidcClientCredentialsOptions } from "./oidc-client-credentials.js";
