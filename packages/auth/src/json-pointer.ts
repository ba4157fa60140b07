/**
 * RFC 6901 JSON Pointer, read side only: `JWT_SESSION_FIELD`, `JWT_USER_FIELD` and the extractor
 * config name claim fields this way. A pointer is parsed once (at config load) and then applied to
 * every token's claims.
 */

export class JsonPointerError extends Error {
  override readonly name = 'JsonPointerError';
}

/** Splits a pointer into its unescaped reference tokens; '' (the whole document) gives []. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPointerError(`JSON pointer must start with "/": ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => {
      if (/~(?![01])/.test(segment)) throw new JsonPointerError(`invalid escape in JSON pointer: ${pointer}`);
      // ~1 first, so that "~01" reads as "~1" and not as "/" (RFC 6901 §4).
      return segment.replaceAll('~1', '/').replaceAll('~0', '~');
    });
}

/** Reads the value at `pointer`; undefined when any step of the path is missing. */
export function readJsonPointer(document: unknown, pointer: string | readonly string[]): unknown {
  const segments = typeof pointer === 'string' ? parseJsonPointer(pointer) : pointer;
  let current = document;
  for (const segment of segments) {
    current = step(current, segment);
    if (current === undefined) return undefined;
  }
  return current;
}

/** Parses once and returns a reader, for pointers applied to many documents. */
export function compileJsonPointer(pointer: string): (document: unknown) => unknown {
  const segments = parseJsonPointer(pointer);
  return (document) => readJsonPointer(document, segments);
}

const arrayIndex = /^(?:0|[1-9]\d*)$/;

function step(value: unknown, segment: string): unknown {
  if (Array.isArray(value)) return arrayIndex.test(segment) ? value[Number(segment)] : undefined;
  // Own properties only: "/constructor" or "/__proto__" must not reach Object.prototype.
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment))
    return (value as Record<string, unknown>)[segment];
  return undefined;
}
