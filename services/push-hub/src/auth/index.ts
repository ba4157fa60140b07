// The hub's side of authentication: JWT checks, bearer tokens, connection tokens and the address key.
export { addressKey } from './address-key.ts';
export { bearerTokens, connectionTokensFrom, hubAuthFrom } from './auth-adapter.ts';
export { type ConnectionAddress, type ConnectionTokens, newConnectionId } from './connection-tokens.ts';
export type { BearerTokens, HubAuth } from './hub-auth.ts';
