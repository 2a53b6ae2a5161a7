export { createPeerRoutes, peerServiceImpl } from "./peer-service.js";
export { createPeerServer, type PeerServer } from "./peer-server.js";
export { peerTokenInterceptor, peerTokenSigner, secretsEqual, bearerToken } from "./peer-auth.js";
export { toConnectError, fromConnectError } from "./errors.js";
export { toEntry, fromEntry } from "./convert.js";
