/** The line every benchmark report starts with: what machine and runtime produced the numbers. */
import { cpus, loadavg } from 'node:os';

export function boxLine(extra: Record<string, string> = {}): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const parts = [`${cpu}`, `${cpus().length} vCPU`, `Node ${process.version}`];
  for (const [k, v] of Object.entries(extra)) parts.push(`${k} ${v}`);
  return `box: ${parts.join(', ')}`;
}

/** The 1-minute load average now: every figure is printed with it (2 CPUs: above 2, other work ran). */
export function loadAverage(): number {
  return loadavg()[0]!;
}
