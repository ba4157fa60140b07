/**
 * Errors that retrying cannot cure: the server refused the credentials, or one side refused the
 * other's certificate. At start-up they end the connection attempt at once, with a message naming
 * the settings to fix (redis-security.ts), instead of a time-out that says nothing.
 */

// Node's codes for a server certificate the trusted CAs do not vouch for (or that names another host).
const untrustedServer = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** What to fix when `err` is such a refusal; undefined for any other error (an outage). */
export function redisRefusal(err: Error & { code?: string }): string | undefined {
  const text = err.message;
  if (/^(WRONGPASS|NOAUTH)/.test(text) || /invalid (username-)?password|AUTH failed/i.test(text))
    return `REDIS_USERNAME / REDIS_PASSWORD (or the user:password in REDIS_URL) refused by the server: ${text}`;
  if (err.code !== undefined && untrustedServer.has(err.code))
    return `REDIS_TLS_CA_FILE does not vouch for the server's certificate: ${text}`;
  // The server's alert when it wants a client certificate, or does not trust the one it got.
  if (
    /alert (certificate required|unknown ca|bad certificate|certificate unknown)|peer did not return a certificate/i.test(
      text,
    )
  )
    return `REDIS_TLS_CERT_FILE / REDIS_TLS_KEY_FILE: the server refused the client certificate: ${text}`;
  return undefined;
}
