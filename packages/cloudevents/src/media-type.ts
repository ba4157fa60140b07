/**
 * Media types (RFC 2046 / RFC 9110 `Content-Type`) as the bindings need them: which mode a message
 * is in, and whether its data is JSON, text or opaque bytes.
 */
const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const mediaTypeSyntax = new RegExp(`^${token}/${token}(\\s*;\\s*${token}=(${token}|"[^"]*"))*\\s*;?\\s*$`);

export function isMediaType(text: string): boolean {
  return mediaTypeSyntax.test(text.trim());
}

/** `type/subtype` in lower case, without parameters; undefined for an absent or blank header. */
export function essence(contentType: string | undefined): string | undefined {
  const value = contentType?.split(';')[0]?.trim().toLowerCase();
  return value ? value : undefined;
}

/** application/json, text/json and any `+json` suffix type (application/cloudevents+json …). */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const type = essence(contentType);
  return (
    type !== undefined && (type === 'application/json' || type === 'text/json' || type.endsWith('+json'))
  );
}

/** Types whose data is text, so it can travel as a JSON string instead of base64. */
export function isTextMediaType(contentType: string | undefined): boolean {
  const type = essence(contentType);
  if (type === undefined) return false;
  return (
    type.startsWith('text/') ||
    type.endsWith('+xml') ||
    ['application/xml', 'application/javascript', 'application/x-www-form-urlencoded'].includes(type)
  );
}
