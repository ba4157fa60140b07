/**
 * JWT_JWKS_URL: the keys every token is checked with come from there, so whoever can change the
 * answer can sign tokens. Over plain http anyone on the network path can, so http is refused unless
 * the host is a loopback address (the traffic never leaves the machine or pod: a local sidecar or
 * key cache) or JWT_JWKS_ALLOW_HTTP says the operator accepts it.
 */
import { ConfigError, type Field, optionalStr } from '@gatehouse/service-kit';
import { isIP } from 'node:net';

/** An optional http or https URL (whether http is allowed is checkJwksUrl's to say). */
export function jwksUrl(description: string): Field<string | undefined> {
  const text = optionalStr(description);
  return {
    ...text,
    parse(raw) {
      const value = text.parse(raw);
      if (value === undefined) return undefined;
      if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
        throw new Error('must be an http or https URL');
      return value;
    },
  };
}

/** Throws a ConfigError for a plain-http URL to a host that is not loopback, unless allowed. */
export function checkJwksUrl(url: string | undefined, allowHttp: boolean): void {
  if (url === undefined || allowHttp) return;
  const parsed = new URL(url);
  if (parsed.protocol === 'https:' || isLoopback(parsed.hostname)) return;
  throw new ConfigError([
    `JWT_JWKS_URL: plain http to ${parsed.hostname} lets anyone on the path replace the signing keys; use https (or set JWT_JWKS_ALLOW_HTTP=true to accept the risk)`,
  ]);
}

/** localhost, 127.0.0.0/8 and ::1 (URL keeps IPv6 hosts in brackets). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}
