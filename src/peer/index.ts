export { createPeerRoutes, peerServiceImpl } from "./peer-service.js";
export { createPeerHandler, type PeerRequestHandler } from "./peer-handler.js";
export { createPeerServer, createSecurePeerServer, type PeerServer } from "./peer-server.js";
export { peerTlsOptions, type PeerTlsOptions } from "./peer-tls.js";
export { ConnectPeerTransport, type ConnectPeerTransportOptions } from "./client.js";
export { peerTokenInterceptor, peerTokenSigner, secretsEqual, bearerToken, createPeerAuth, InsecureAuthConfigError, type PeerAuth, type PeerAuthOptions } from "./peer-auth.js";
export { toConnectError, fromConnectError } from "./errors.js";
export { toEntry, fromEntry } from "./convert.js";
