// @hypercache/client/browser: the core for browser pages, bundled by scripts/build-browser.mjs.
// Everything the main entry has but OAuth client credentials (the `oidc` option is a
// ClientConfigError here): the grant needs a client secret, and a page cannot keep one (RFC 6749
// 4.4: confidential clients only). A page gets its token from its own sign-in and passes `token`
// or `auth`.
export * from "./exports.js";
export { HypercacheClient } from "./client.js";
