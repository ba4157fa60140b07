/**
 * Whether a JWT's `exp` has passed, read without checking it (the gateway checks): so a token that
 * expired while the client was away is renewed before a connect instead of being refused by it, or
 * accepted within the gateway's clock leeway and ending at once. Not a JWT, or no `exp`: false.
 */
export function jwtExpired(token: string, nowMs = Date.now()): boolean {
  const expiresAt = jwtExpiresAt(token);
  return expiresAt !== undefined && expiresAt <= nowMs;
}

/** When a JWT's `exp` says it ends (ms since the epoch), read without checking it; undefined without one. */
export function jwtExpiresAt(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
