// What a bearer token may be: visible ASCII without spaces, what fits in
// `Authorization: Bearer <token>`. One rule for the Authorization header's parser, the policy
// file's tokens and the SERVICE_AUTH_TOKEN / SERVICE_PEER_TOKEN settings.

const BEARER_TOKEN = /^[\x21-\x7e]+$/;

/** The reason a token is refused, for the messages that refuse one. */
export const BEARER_TOKEN_RULE = "must be visible ASCII without spaces (it travels as Authorization: Bearer <token>)";

export function isBearerToken(text: string): boolean {
  return BEARER_TOKEN.test(text);
}
