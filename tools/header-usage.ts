/**
 * A tool's `--help`: its header comment (what it does, its options and environment), read from the
 * file itself so the usage and the comment cannot drift apart.
 */
import { readFileSync } from 'node:fs';

/** The first block comment of the file at `url`, without its comment marks. */
export function headerUsage(url: string | URL): string {
  const header = readFileSync(new URL(url), 'utf8').split('*/')[0]!;
  return header.replace(/^\/\*\*\n|^ \* ?/gm, '').trimEnd();
}
