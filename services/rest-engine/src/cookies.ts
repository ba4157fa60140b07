/**
 * The Cookie request header as a name → value map. Pairs whose name is not an RFC 6265 token or
 * whose value holds characters a cookie may not carry are dropped.
 */
const tokenName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const cookieValue = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

export function parseCookies(header: string | undefined): Record<string, string> | undefined {
  if (!header) return undefined;
  const out: Record<string, string> = {};
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (tokenName.test(name) && cookieValue.test(value) && !(name in out)) out[name] = value;
  }
  return out;
}
