/**
 * Errors that retrying cannot cure: the server refused the credentials, or one side refused the
 * other's certificate. At start-up they end the connection attempt at once, with a message naming
 * the settings to fix (redis-security.ts), instead of a time-out that says nothing.
 */
import { isRefusedClientCertificate, isUntrustedServerCertificate } from '@gatehouse/service-kit';

/** What to fix when `err` is such a refusal; undefined for any other error (an outage). */
export function redisRefusal(err: Error & { code?: string }): string | undefined {
  const text = err.message;
  if (/^(WRONGPASS|NOAUTH)/.test(text) || /invalid (username-)?password|AUTH failed/i.test(text))
    return `REDIS_USERNAME / REDIS_PASSWORD (or the user:password in REDIS_URL) refused by the server: ${text}`;
  if (isUntrustedServerCertificate(err))
    return `REDIS_TLS_CA_FILE does not vouch for the server's certificate: ${text}`;
  if (isRefusedClientCertificate(text))
    return `REDIS_TLS_CERT_FILE / REDIS_TLS_KEY_FILE: the server refused the client certificate: ${text}`;
  return undefined;
}
