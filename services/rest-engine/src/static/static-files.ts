/**
 * Static content from `static.html.folder`. A path maps to a file under the folder: `/` and a
 * folder path (`/docs/`) to its `index.html`, a last segment without a dot to that name plus
 * `.html` when such a file exists. Files carry a strong ETag (SHA-256 of the content) and answer
 * 304 to a matching `If-None-Match`; no-cache pages are sent with headers that forbid caching and
 * without ETag. A path that would leave the folder (`..`, encoded or not, or a symbolic link that
 * points outside) is refused as not found. Contents are cached and checked against the file with
 * one synchronous stat per request (its inode, size, modification and change times: a rewrite that
 * keeps the size and restores the modification time, or a rename over the file, still changes the
 * change time or the inode), the least recently used going first when their bytes pass
 * `maxCacheBytes`; a file larger than that budget is read for each request and never cached. A
 * cached file is found without a promise (`find` answers it as is), so a static answer in the
 * cache takes no trip through the microtask queue.
 */
import { createHash } from 'node:crypto';
import { promises as fs, realpathSync, type Stats, statSync } from 'node:fs';
import { join, relative as relativeTo, sep } from 'node:path';
import { realPathInside } from '@gatehouse/service-kit';
import { mimeTypeOf } from './mime-types.ts';

export interface StaticFile {
  /**
   * The file's real path relative to the folder's, with `/` (links resolved, and the case the file
   * system keeps): what the static-content rules decide on (servedPaths).
   */
  relative: string;
  contentType: string;
  etag: string;
  body: Buffer;
}

interface CacheEntry {
  file: StaticFile;
  /** What the file was when read: a stat that differs in one of them means it changed. */
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/** Default budget of the content cache. */
export const defaultStaticCacheBytes = 32 * 1024 * 1024;

/** A candidate that is a file: its path, its stat, and its content when the cache has it current. */
interface Found {
  full: string;
  stat: Stats;
  cached: StaticFile | undefined;
}

export class StaticFolder {
  readonly root: string;
  readonly maxCacheBytes: number;
  /** By full path, least recently used first. */
  private readonly cache = new Map<string, CacheEntry>();
  private heldBytes = 0;

  constructor(root: string, maxCacheBytes = defaultStaticCacheBytes) {
    this.root = root;
    this.maxCacheBytes = maxCacheBytes;
  }

  /** Bytes of file content held in the cache. */
  get cachedBytes(): number {
    return this.heldBytes;
  }

  /**
   * The file for a request path, undefined when there is none or the path is refused: the file
   * itself when the cache holds it as it is on disk, else a promise (it is read).
   */
  find(requestPath: string): StaticFile | undefined | Promise<StaticFile | undefined> {
    const segments = safeSegments(requestPath);
    if (segments === undefined) return undefined;
    const list = candidates(segments, requestPath.endsWith('/'));
    for (let i = 0; i < list.length; i++) {
      const found = this.look(list[i]!);
      if (found === undefined) continue;
      if (found.cached) return found.cached;
      return this.readFrom(list, i, found);
    }
    return undefined;
  }

  /** Reads the candidate at `i` (stat given), else tries those after it. */
  private async readFrom(list: string[], i: number, found: Found): Promise<StaticFile | undefined> {
    const file = await this.read(list[i]!, found);
    if (file) return file;
    for (let k = i + 1; k < list.length; k++) {
      const next = this.look(list[k]!);
      if (next === undefined) continue;
      const later = next.cached ?? (await this.read(list[k]!, next));
      if (later) return later;
    }
    return undefined;
  }

  /** The candidate's stat when it is a file, and its cached content when that is still current. */
  private look(relative: string): Found | undefined {
    const full = join(this.root, ...relative.split('/'));
    // A synchronous stat: a folder on the local disk answers in a few µs, and the thread-pool round
    // trip of fs.promises.stat cost more CPU than the rest of a static answer together (a third of
    // the engine's time serving a 4 KiB file, --cpu-prof, issue 25). `throwIfNoEntry: false`: a
    // missing file is the common case of the candidates tried in turn, not an exception.
    let stat: Stats | undefined;
    try {
      stat = statSync(full, { throwIfNoEntry: false });
    } catch {
      return undefined; // not a folder on the way, too long a name, no permission
    }
    if (stat === undefined || !stat.isFile()) return undefined;
    const cached = this.cache.get(full);
    if (
      cached &&
      cached.ino === stat.ino &&
      cached.size === stat.size &&
      cached.mtimeMs === stat.mtimeMs &&
      cached.ctimeMs === stat.ctimeMs
    ) {
      // Moved to the end: the most recently used.
      this.cache.delete(full);
      this.cache.set(full, cached);
      return { full, stat, cached: cached.file };
    }
    return { full, stat, cached: undefined };
  }

  private async read(relative: string, { full, stat }: Found): Promise<StaticFile | undefined> {
    // Symbolic links may not lead out of the folder.
    const real = realPathInside(this.root, full);
    if (real === undefined) return undefined;
    const body = await fs.readFile(full);
    const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
    const file: StaticFile = {
      relative: relativePath(realpathSync.native(this.root), real),
      contentType: mimeTypeOf(relative),
      etag,
      body,
    };
    const { ino, size, mtimeMs, ctimeMs } = stat;
    this.remember(full, { file, ino, size, mtimeMs, ctimeMs });
    return file;
  }

  private remember(full: string, entry: CacheEntry): void {
    const old = this.cache.get(full);
    if (old) {
      this.cache.delete(full);
      this.heldBytes -= old.file.body.length;
    }
    const bytes = entry.file.body.length;
    if (bytes > this.maxCacheBytes) return;
    for (const [path, oldest] of this.cache) {
      if (this.heldBytes + bytes <= this.maxCacheBytes) break;
      this.cache.delete(path);
      this.heldBytes -= oldest.file.body.length;
    }
    this.cache.set(full, entry);
    this.heldBytes += bytes;
  }
}

/**
 * Decoded, non-empty segments; undefined for a traversal attempt (`..`, `.` after decoding), a
 * malformed escape, a NUL byte or a back-slash (a separator on some systems).
 */
export function safeSegments(requestPath: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of requestPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '..' || segment === '.' || /[\\/\0]/.test(segment)) return undefined;
    out.push(segment);
  }
  return out;
}

function relativePath(realRoot: string, real: string): string {
  return relativeTo(realRoot, real).split(sep).join('/');
}

/** The files a request path may name, tried in turn; servedPaths is its inverse. */
function candidates(segments: string[], trailingSlash: boolean): string[] {
  if (segments.length === 0) return ['index.html'];
  const path = segments.join('/');
  if (trailingSlash) return [`${path}/index.html`];
  const last = segments.at(-1)!;
  return last.includes('.') ? [path] : [path, `${path}.html`, `${path}/index.html`];
}

/** True when `If-None-Match` names this ETag (a list, or `*`; weak comparison as RFC 9110 says). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Every request path (decoded, canonical) that serves the file at `relative`, the inverse of
 * `candidates`: `a/b.html` is `/a/b.html` and `/a/b`; `a/index.html` is also `/a/` and `/a`; the
 * root's `index.html` is also `/`. The static-content rules decide on these, so a file is filtered
 * however the request spelled it (`/forbidden` served forbidden.html unfiltered, issue 34).
 */
export function servedPaths(relative: string): string[] {
  const paths = [`/${relative}`];
  const stem = relative.endsWith('.html') ? relative.slice(0, -'.html'.length) : undefined;
  if (stem === undefined || stem.slice(stem.lastIndexOf('/') + 1).includes('.')) return paths;
  paths.push(`/${stem}`);
  if (stem === 'index') paths.push('/');
  else if (stem.endsWith('/index')) {
    const folder = stem.slice(0, -'/index'.length);
    paths.push(`/${folder}/`);
    if (!folder.slice(folder.lastIndexOf('/') + 1).includes('.')) paths.push(`/${folder}`);
  }
  return paths;
}
