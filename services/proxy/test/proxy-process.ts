/**
 * A proxy replica as a real process (`node services/proxy/src/main.ts`), on ports chosen by the OS
 * (read back from its `listening` log line), with its log kept for assertions.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const mainFile = fileURLToPath(new URL('../src/main.ts', import.meta.url));
/** Shared by every proxy a test starts, so correlation ids cross between them. */
const testTokenSecret = 'proxy-process-test-token-secret';
/** The tests' backends listen on loopback, which PROXY_TARGET_ALLOW must list (a test may override it). */
const testTargets = '127.0.0.1';

export interface ProxyProcess {
  child: ChildProcess;
  publicUrl: string;
  apiUrl: string;
  /** The HTTPS / HTTP/2 edge, when the process got a certificate. */
  publicTlsUrl: string | undefined;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resident set size in bytes (from /proc). */
  rss(): number;
  stop(): Promise<number | null>;
}

export async function startProxy(env: Record<string, string>, timeoutMs = 30_000): Promise<ProxyProcess> {
  const child = spawn(process.execPath, [mainFile], {
    env: {
      ...process.env,
      INBOUND_PORT: '0',
      API_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      TOKEN_SECRET: testTokenSecret,
      PROXY_TARGET_ALLOW: testTargets,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const ports = await new Promise<{ publicPort: number; apiPort: number; publicTlsPort?: number }>(
    (resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`proxy did not start:\n${output}`)), timeoutMs);
      const look = () => {
        for (const line of output.split('\n')) {
          if (!line.includes('"listening"')) continue;
          clearTimeout(timer);
          const record = JSON.parse(line) as { publicPort: number; apiPort: number; publicTlsPort?: number };
          return resolve(record);
        }
      };
      child.stdout!.on('data', look);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`proxy exited with ${code}:\n${output}`));
      });
    },
  );
  return {
    child,
    publicUrl: `http://127.0.0.1:${ports.publicPort}`,
    apiUrl: `http://127.0.0.1:${ports.apiPort}`,
    publicTlsUrl: ports.publicTlsPort === undefined ? undefined : `https://127.0.0.1:${ports.publicTlsPort}`,
    output: () => output,
    rss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    },
    stop: () => stopChild(child),
  };
}

/** Runs the proxy expecting it to refuse to start; resolves its exit code and output. */
export function runProxyExpectingExit(
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [mainFile], {
    env: {
      ...process.env,
      INBOUND_PORT: '0',
      API_PORT: '0',
      HOST: '127.0.0.1',
      TOKEN_SECRET: testTokenSecret,
      PROXY_TARGET_ALLOW: testTargets,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}
