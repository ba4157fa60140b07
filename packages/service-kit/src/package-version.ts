/**
 * The version of the package a file belongs to: the `version` of the nearest package.json above it.
 * A service reports it as `service.version` on its spans; its entry point (process.argv[1], e.g.
 * services/proxy/src/main.ts) names the package.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export function packageVersion(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  let dir = dirname(resolve(file));
  for (;;) {
    const version = versionIn(join(dir, 'package.json'));
    if (version !== null) return version;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The version in that package.json; null when there is no such file (look further up). */
function versionIn(path: string): string | undefined | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : undefined;
}
