/** The hub's view of the shared auth package: token checks, Authorization parsing, connection tokens. */
import { type Auth, describeAuthorizationProblem, parseAuthorizationHeader } from '@gatehouse/auth';
import { addressKey } from './address-key.ts';
import type { ConnectionTokens } from './connection-tokens.ts';
import type { BearerTokens, HubAuth } from './hub-auth.ts';

export function hubAuthFrom(auth: Auth): HubAuth {
  return {
    verify: async (jwt) => (await auth.verifyAndCheck(jwt)).claims,
    sessionIdOf: (claims) => auth.sessions.sessionId(claims),
    userOf: (claims) => auth.sessions.userName(claims),
    isBlacklisted: (sessionId) => auth.blacklist.isBlacklisted(sessionId),
  };
}

export const bearerTokens: BearerTokens = (header) => {
  const credentials = parseAuthorizationHeader(header);
  const problem = describeAuthorizationProblem(credentials);
  if (problem) throw new Error(problem);
  return credentials.bearerTokens;
};

/** Tokens of this replica's connections: they live `ttlMs`, or less when asked (a session's JWT expiry). */
export function connectionTokensFrom(auth: Auth, replica: string, ttlMs: number): ConnectionTokens {
  return {
    replica,
    issue: (id, clientAddress, notAfter) =>
      auth.connectionTokens.encode({
        replica,
        id,
        expiresAt: Math.min(notAfter ?? Infinity, Date.now() + ttlMs),
        holder: addressKey(clientAddress),
      }),
    read: (token) => auth.connectionTokens.decode(token),
    issuedTo: (token, clientAddress) => auth.connectionTokens.heldBy(token, addressKey(clientAddress)),
  };
}
