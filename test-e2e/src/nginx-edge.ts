/**
 * The nginx edge of the full topology, as the test's own child process: deploy/nginx's template
 * rendered for the test's 127.0.0.1 upstreams (the same file docker-compose renders with service
 * names), inside a minimal main config whose pid, logs and temp files all live in a fresh temp dir.
 * nginx (Debian's package) runs in the foreground, so the test holds its PID and stops it; a child
 * still running when the test process exits is killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@gatehouse/testkit';

export const edgeTemplatePath = fileURLToPath(
  new URL('../../deploy/nginx/gatehouse.conf.template', import.meta.url),
);

/** host:port of every replica behind each upstream of the template. */
export interface EdgeUpstreams {
  pushHub: string[];
  pushHubApi: string[];
  publisher: string[];
  publisherApi: string[];
  proxy: string[];
  proxyApi: string[];
  blacklistApi: string[];
}

export interface NginxEdge {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` of the public surface. */
  readonly publicUrl: string;
  /** `http://127.0.0.1:<port>` of the internal API. */
  readonly internalUrl: string;
  readonly listen: { publicPort: number; internalPort: number };
  /** What nginx wrote to stderr (its error log). */
  output(): string;
  /** SIGTERM (nginx's fast shutdown), SIGKILL after `timeoutMs`; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** Fills every ${NAME} of the template; a placeholder without a value is an error, not an empty string. */
export function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the nginx template`);
    return value;
  });
}

/** The template's variables for upstreams on this machine: one `server` line per replica. */
export function edgeTemplateValues(
  upstreams: EdgeUpstreams,
  listen: { publicPort: number; internalPort: number },
): Record<string, string> {
  const servers = (addresses: string[]) => addresses.map((a) => `server ${a} max_fails=0;`).join(' ');
  return {
    GATEHOUSE_PUBLIC_LISTEN: `127.0.0.1:${listen.publicPort}`,
    GATEHOUSE_INTERNAL_LISTEN: `127.0.0.1:${listen.internalPort}`,
    GATEHOUSE_PUSH_HUB: servers(upstreams.pushHub),
    GATEHOUSE_PUSH_HUB_API: servers(upstreams.pushHubApi),
    GATEHOUSE_PUBLISHER: servers(upstreams.publisher),
    GATEHOUSE_PUBLISHER_API: servers(upstreams.publisherApi),
    GATEHOUSE_PROXY: servers(upstreams.proxy),
    GATEHOUSE_PROXY_API: servers(upstreams.proxyApi),
    GATEHOUSE_BLACKLIST_API: servers(upstreams.blacklistApi),
    GATEHOUSE_INTERNAL_HOSTS: '127.0.0.1 localhost',
  };
}

export interface EdgeOptions {
  /** The ports to listen on (an edge started again in place of one stopped); free ones otherwise. */
  listen?: { publicPort: number; internalPort: number };
  /**
   * nginx `location` blocks put first in the public server, before the template's own: what a
   * proxy between client and gateway does to some paths (strip WebSocket upgrades, buffer SSE).
   */
  publicLocations?: string;
}

/** Where the template's public server starts its own locations. */
const firstPublicLocation = '    location /_gw/v1/connection/ {';

export async function startNginxEdge(
  upstreams: EdgeUpstreams,
  options: EdgeOptions = {},
): Promise<NginxEdge> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-nginx-'));
  // Run as root, nginx's workers drop to `nobody`: they must reach the temp dirs inside.
  await chmod(dir, 0o755);
  const listen = options.listen ?? { publicPort: await freePort(), internalPort: await freePort() };
  const template = await readFile(edgeTemplatePath, 'utf8');
  let config = renderTemplate(template, edgeTemplateValues(upstreams, listen));
  if (options.publicLocations !== undefined) {
    if (!config.includes(firstPublicLocation)) throw new Error('the template has no connection location');
    config = config.replace(firstPublicLocation, `${options.publicLocations}\n${firstPublicLocation}`);
  }
  await writeFile(join(dir, 'gatehouse.conf'), config);
  await writeFile(join(dir, 'nginx.conf'), mainConfig(dir));

  const lines: string[] = [];
  const child = spawn(nginxBinary(), ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('error', (err) => lines.push(`nginx could not be started: ${err.message}`));
  const exited = exitCodeOf(child);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const edge: NginxEdge = {
    pid: child.pid ?? -1,
    publicUrl: `http://127.0.0.1:${listen.publicPort}`,
    internalUrl: `http://127.0.0.1:${listen.internalPort}`,
    listen,
    output: () => lines.join('\n'),
    async stop(timeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        process.off('exit', killOnExit);
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
  let exitedEarly = false;
  void exited.then(() => {
    exitedEarly = true;
  });
  try {
    await waitFor(
      async () => {
        if (exitedEarly) throw new Error(`nginx exited during start-up:\n${edge.output()}`);
        return (await fetch(`${edge.internalUrl}/health`)).ok;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'nginx to answer' },
    );
  } catch (err) {
    await edge.stop(2000);
    throw new Error(`${(err as Error).message}\n${edge.output()}`);
  }
  return edge;
}

/** The main context around the template: foreground, one worker, everything under `dir`. */
function mainConfig(dir: string): string {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events {
    worker_connections 1024;
}
http {
    access_log off;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/gatehouse.conf;
}
`;
}

/** NGINX_BIN, else Debian's /usr/sbin/nginx, else whatever `nginx` is on PATH. */
function nginxBinary(): string {
  return process.env['NGINX_BIN'] ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');
}

/** Resolves on exit, and with null when the binary could not be started at all. */
function exitCodeOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
}
