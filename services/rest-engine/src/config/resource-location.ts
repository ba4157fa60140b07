/**
 * Locations written as `classpath:/x` (the application's resources: the service's config folder),
 * `file:/x` or `file:x` (the file system, relative to the working directory), or a bare path.
 */
import { isAbsolute, join, resolve } from 'node:path';

export function resolveLocation(location: string, configFolder: string): string {
  const text = location.trim();
  if (text.startsWith('classpath:')) return join(configFolder, text.slice('classpath:'.length));
  const path = text.startsWith('file:') ? text.slice('file:'.length) : text;
  return isAbsolute(path) ? path : resolve(path);
}

/** `a.yaml, b.yaml` → the resolved paths, in order. */
export function resolveLocations(list: string, configFolder: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => resolveLocation(s, configFolder));
}
