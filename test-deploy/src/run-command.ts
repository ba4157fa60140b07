/**
 * A long command of the deployment stages (tools/containers.sh, docker-compose, helm, kubectl) run to
 * completion within a limit. The limit ends the whole process tree: a script killed alone leaves the
 * build or broker it runs holding the output pipes. The call settles when the command exits, not
 * when its pipes close, so nothing the command leaves behind can hold the test open.
 */
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** The limit; the command and everything it started are ended once it is out. */
  timeoutMs?: number;
  /** Pass the command's stderr through (progress and timings of long stages). */
  showProgress?: boolean;
}

/** How long output may still come after the command exited, from what it left holding the pipes. */
const drainMs = 2000;
/** From SIGTERM to SIGKILL for a tree that outlived its limit. */
const killGraceMs = 10_000;

/** Runs a command to completion; rejects with its output when it fails or outlives `timeoutMs`. */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<string> {
  const { env = process.env, timeoutMs = 120_000, showProgress = false } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      if (showProgress) process.stderr.write(c);
    });
    let outlived = false;
    let tree: number[] = [];
    const killTimers: NodeJS.Timeout[] = [];
    const limit = setTimeout(() => {
      outlived = true;
      // Found before anything dies: a killed parent's children are moved to init, out of reach.
      tree = processTree(child.pid);
      signal(tree, 'SIGTERM');
      killTimers.push(setTimeout(() => signal(tree, 'SIGKILL'), killGraceMs));
    }, timeoutMs);
    let settled = false;
    const settle = (code: number | null, sig: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      // What is left of a tree that outlived its limit still gets its SIGKILL, without holding us.
      for (const t of killTimers) t.unref();
      // What the command left behind may keep the pipes; they are this process's to close.
      child.stdout.destroy();
      child.stderr.destroy();
      const said = `${stdout}\n${stderr}`.trim();
      if (outlived)
        reject(
          new Error(`${command} ${args.join(' ')} outlived its limit of ${timeoutMs / 1000} s:\n${said}`),
        );
      else if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} ended with ${code ?? sig}:\n${said}`));
    };
    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      reject(error);
    });
    child.on('close', settle);
    child.on('exit', (code, sig) => {
      // In time: the limit is not for what it left behind (and its pid may be another's soon).
      if (!outlived) clearTimeout(limit);
      setTimeout(() => settle(code, sig), drainMs);
    });
  });
}

/** The process and its descendants, as `ps` sees them now. */
function processTree(root: number | undefined): number[] {
  if (root === undefined) return [];
  const children = new Map<number, number[]>();
  const table = execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  for (const line of table.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}
