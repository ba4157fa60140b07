/**
 * The Cookie request header as a name → value map, split by the `cookie` package. On top, what
 * Mercury (Netty's strict cookie decoder) does and `cookie` does not: values stay as sent (no
 * %-decoding), a value in double quotes loses them, and a pair whose name is not an RFC 6265 token
 * or whose value holds characters a cookie may not carry is dropped. The first of a repeated name
 * wins.
 */
import { parse } from 'cookie';

const tokenName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const cookieValue = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;
const asSent = (value: string) => value;

export function parseCookies(header: string | undefined): Record<string, string> | undefined {
  if (!header) return undefined;
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(parse(header, { decode: asSent }))) {
    if (raw === undefined) continue;
    const value = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
    if (tokenName.test(name) && cookieValue.test(value)) out[name] = value;
  }
  return out;
}
