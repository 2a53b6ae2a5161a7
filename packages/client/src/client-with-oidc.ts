// The client of the package's main entry (and, through it, of @hypercache/client/node): the core
// client with the `oidc` option, OAuth 2.0 client credentials (oidc-client-credentials.ts). The
// browser build (browser.ts) leaves it out: the grant needs a client secret, which a page cannot keep.
import { HypercacheClient as CoreClient } from "./client.js";
import { OidcClientCredentials } from "./oidc-client-credentials.js";
import type { OidcProviderFactory } from "./options.js";

export class HypercacheClient extends CoreClient {
  protected static override readonly oidc: OidcProviderFactory = (o, deps) => new OidcClientCredentials(o, deps);
}
