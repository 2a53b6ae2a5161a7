export { createPeerRoutes, peerServiceImpl } from "./peer-service.js";
export { createPeerHandler, type PeerRequestHandler } from "./peer-handler.js";
export { createPeerServer, createSecurePeerServer, type PeerServer } from "./peer-server.js";
export { peerTlsOptions, type PeerTlsOptions } from "./peer-tls.js";
export { ConnectPeerTransport, type ConnectPeerTransportOptions } from "./client.js";
export { peerTokenSigner, secretsEqual, bearerToken } from "./peer-auth.js";
export { isLoopback, peerRequestRefusal, type PeerGateOptions } from "./peer-gate.js";
export { toConnectError, fromConnectError } from "./errors.js";
export { toEntry, fromEntry } from "./convert.js";
