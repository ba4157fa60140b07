/**
 * The request path as functions, trace records and the static-content rules see it: %-decoded, or
 * as sent when its escapes are malformed (such a path still routes; it just is not decoded).
 */
export function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
