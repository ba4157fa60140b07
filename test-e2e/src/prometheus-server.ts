/**
 * A real Prometheus server (Debian's package) as the test's own child process, scraping the given
 * targets every second. Its config, data and log live in a fresh temp dir that `stop` removes; a
 * server still running when the test process exits is killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@gatehouse/testkit';

/** host:port targets per job name; each is scraped at `/metrics`. */
export type ScrapeJobs = Record<string, string[]>;

export interface ScrapeTarget {
  job: string;
  instance: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface PrometheusServer {
  readonly url: string;
  targets(): Promise<ScrapeTarget[]>;
  /** An instant query; one number per series of the result. */
  query(expression: string): Promise<number[]>;
  output(): string;
  stop(): Promise<void>;
}

export async function startPrometheus(jobs: ScrapeJobs): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(config, prometheusConfig(jobs));
  const url = `http://127.0.0.1:${await freePort()}`;
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${new URL(url).host}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString('utf8')).slice(-20_000);
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const server: PrometheusServer = {
    url,
    targets: () => fetchTargets(url),
    query: (expression) => query(url, expression),
    output: () => log,
    async stop() {
      await stopChild(child, exited);
      process.off('exit', killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(
      () =>
        fetch(`${url}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeoutMs: 30_000 },
    );
  } catch (err) {
    await server.stop();
    throw new Error(`prometheus did not become ready: ${(err as Error).message}\n${log}`);
  }
  return server;
}

/** The scrape config: one job per service, scraped every second so a test waits seconds, not minutes. */
export function prometheusConfig(jobs: ScrapeJobs): string {
  const scrapeConfigs = Object.entries(jobs).map(
    ([job, targets]) =>
      `  - job_name: ${JSON.stringify(job)}\n    static_configs:\n      - targets: ${JSON.stringify(targets)}\n`,
  );
  return `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n${scrapeConfigs.join('')}`;
}

async function fetchTargets(url: string): Promise<ScrapeTarget[]> {
  const body = (await (await fetch(`${url}/api/v1/targets?state=active`)).json()) as {
    data: {
      activeTargets: Array<{
        labels: Record<string, string>;
        health: ScrapeTarget['health'];
        lastError: string;
      }>;
    };
  };
  return body.data.activeTargets.map((t) => ({
    job: t.labels['job'] ?? '',
    instance: t.labels['instance'] ?? '',
    health: t.health,
    lastError: t.lastError,
  }));
}

async function query(url: string, expression: string): Promise<number[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data: { resultType: string; result: Array<{ value: [number, string] }> };
  };
  if (body.status !== 'success') throw new Error(`query ${expression} failed: ${body.error}`);
  return body.data.result.map((r) => Number(r.value[1]));
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
