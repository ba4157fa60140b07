/**
 * The `cursor` of `GET /v3/connections`: where the next page starts, which is after the last
 * connection id of the page before (pages are in id order across every replica, so a connection
 * present all along is listed exactly once). Opaque to clients: a version tag and the id in base64url;
 * anything else is refused (400), so a client cannot build one from a guess.
 */
const tag = 'c1.';
/** Connection ids: 16 URL-safe characters (connection-tokens.ts); a little room for other lengths. */
const idPattern = /^[A-Za-z0-9_-]{1,64}$/;

export class BadCursorError extends Error {
  override readonly name = 'BadCursorError';
}

export function encodeCursor(lastId: string): string {
  return tag + Buffer.from(lastId).toString('base64url');
}

/** The connection id the cursor continues after; throws BadCursorError for one this API did not make. */
export function decodeCursor(cursor: string): string {
  const body = cursor.startsWith(tag) ? cursor.slice(tag.length) : '';
  const id = /^[A-Za-z0-9_-]+$/.test(body) ? Buffer.from(body, 'base64url').toString() : '';
  if (!idPattern.test(id) || encodeCursor(id) !== cursor)
    throw new BadCursorError(
      'cursor: not a cursor this API gave (pass the "next" of the previous page as it is)',
    );
  return id;
}
