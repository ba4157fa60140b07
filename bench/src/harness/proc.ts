/**
 * What /proc says about a running process: CPU time, resident memory and its descendants (servers
 * such as Pushpin run as several processes), plus pinning a process to a CPU. Linux only.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Kernel clock ticks per second, the unit of utime/stime in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const ticksPerSecond = 100;

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
}

/** User plus system CPU time of every thread of the process so far, in seconds. */
export function cpuSecondsOf(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * CPU time of every living thread of the process, in nanoseconds, from /proc/<pid>/task/<tid>/schedstat
 * (time on CPU as the scheduler counts it). The same quantity as cpuSecondsOf, without its 10 ms
 * tick: use it to measure a few milliseconds of work.
 */
export function cpuNanosOf(pid: number): number {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended while we looked
    }
  }
  return sum;
}

/** VmRSS from /proc/<pid>/status, in bytes. */
export function rssBytesOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}

/** Every living descendant of `pid` (children, grandchildren …). */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let parent: number;
    try {
      parent = Number(statFields(Number(entry))[1]);
    } catch {
      continue; // exited while we looked
    }
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const out: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** Resident memory of a process and all its descendants together, in bytes. */
export function treeRssBytesOf(pid: number): number {
  return [pid, ...descendantsOf(pid)].reduce((sum, p) => {
    try {
      return sum + rssBytesOf(p);
    } catch {
      return sum; // exited while we looked
    }
  }, 0);
}

/** CPU time of a process and all its living descendants together (schedstat), in seconds. */
export function treeCpuSecondsOf(pid: number): number {
  const nanos = [pid, ...descendantsOf(pid)].reduce((sum, p) => {
    try {
      return sum + cpuNanosOf(p);
    } catch {
      return sum;
    }
  }, 0);
  return nanos / 1e9;
}

/**
 * Pins every thread of a running process to one CPU (or a taskset list such as `0-1`); threads it
 * starts later inherit the mask.
 */
export function pinProcess(pid: number, cpu: number | string): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** The open-files limit (RLIMIT_NOFILE) of a process, from /proc/<pid>/limits. */
export function fdLimitsOf(pid: number): { soft: number; hard: number } {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(
    readFileSync(`/proc/${pid}/limits`, 'utf8'),
  );
  if (!m) throw new Error(`no open-files limit for process ${pid}`);
  const n = (v: string) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v));
  return { soft: n(m[1]!), hard: n(m[2]!) };
}

/**
 * Raises a process's soft open-files limit to its hard limit (what `ulimit -n $(ulimit -Hn)` does
 * in a shell; Debian's default soft limit is 1024), with util-linux `prlimit`. Processes it starts
 * afterwards inherit the raised limit. Raising the hard limit itself needs CAP_SYS_RESOURCE (an
 * operator's `LimitNOFILE=`, `--ulimit nofile=` or limits.conf). Returns the limits now in force.
 */
export function raiseFdLimit(pid: number): { soft: number; hard: number } {
  const { soft, hard } = fdLimitsOf(pid);
  if (soft < hard) {
    const value = hard === Number.POSITIVE_INFINITY ? 'unlimited' : String(hard);
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${value}:${value}`], { stdio: 'ignore' });
  }
  return fdLimitsOf(pid);
}
