/** The line every benchmark report starts with: what machine and runtime produced the numbers. */
import { cpus } from 'node:os';

export function boxLine(extra: Record<string, string> = {}): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const parts = [`${cpu}`, `${cpus().length} vCPU`, `Node ${process.version}`];
  for (const [k, v] of Object.entries(extra)) parts.push(`${k} ${v}`);
  return `box: ${parts.join(', ')}`;
}
