/**
 * A temporary folder removed when the process exits: a test's key material must not pile up in
 * /tmp run after run (hundreds of folders of keys after a day of CI runs on one machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function throwAwayDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
