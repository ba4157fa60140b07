/**
 * Keeping a path inside a folder when part of it comes from a request: static content and flow
 * `file(...)` mappings use it, so that neither `..` nor a symbolic link in the folder leads out.
 * The check is on the real path, and the caller uses the real path it answers for the file
 * operation, not the path it was given.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';

/**
 * The real path of `path` when it lies in `folder` (the folder itself included), else undefined.
 * Symbolic links are resolved, both in the folder's path and in `path`; for a path that does not
 * exist yet (a file to write, a folder not made yet), those of its nearest existing ancestor. A
 * symbolic link whose target does not exist is refused: writing through it would create the target
 * wherever it points.
 */
export function realPathInside(folder: string, path: string): string | undefined {
  const realFolder = realPathOf(resolve(folder));
  const real = realPathOf(resolve(path));
  if (realFolder === undefined || real === undefined) return undefined;
  const prefix = realFolder.endsWith(sep) ? realFolder : realFolder + sep;
  return real === realFolder || real.startsWith(prefix) ? real : undefined;
}

/** Undefined when the path cannot be resolved or ends in a dangling link. */
function realPathOf(path: string): string | undefined {
  const missing: string[] = [];
  let existing = path;
  for (;;) {
    try {
      return join(realpathSync.native(existing), ...missing);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
      if (isEntry(existing)) return undefined;
      const parent = dirname(existing);
      if (parent === existing) return undefined;
      missing.unshift(basename(existing));
      existing = parent;
    }
  }
}

/** Whether the path names a directory entry itself (a link is one even when its target is not). */
function isEntry(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
