/** Starts the REST engine for HTTP tests, with its logs collected and its spans recorded. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger, createRegistry, type Registry } from '@gatehouse/service-kit';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createRestEngine, type RestEngineService } from '../src/index.ts';

export interface RunningEngine {
  engine: RestEngineService;
  base: string;
  logs: Array<Record<string, unknown>>;
  spans: InMemorySpanExporter;
  registry: Registry;
  stop(): Promise<void>;
}

/** The example app (examples/rest-app): the engine's configuration unless a test names its own. */
export const exampleApp = fileURLToPath(new URL('../../../examples/rest-app/', import.meta.url));

export async function startEngine(env: Record<string, string> = {}): Promise<RunningEngine> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    name: 'test',
    level: 'debug',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const spans = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const registry = createRegistry();
  const engine = createRestEngine({
    logger,
    registry,
    tracer: provider.getTracer('test'),
    env: { REST_SERVER_PORT: '0', REST_SERVER_HOST: '127.0.0.1', REST_CONFIG_FOLDER: exampleApp, ...env },
    drainTimeoutMs: 1000,
  });
  await engine.start();
  return {
    engine,
    base: `http://127.0.0.1:${engine.port}`,
    logs,
    spans,
    registry,
    stop: () => engine.stop(),
  };
}

/** A port that was free a moment ago (for configurations that must know their own port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A config folder in the temp directory with the given files (names may include folders). */
export function configFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rest-engine-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

export const messages = (logs: Array<Record<string, unknown>>, level: number) =>
  logs.filter((l) => l['level'] === level).map((l) => String(l['msg']));

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request with its target sent exactly as given (fetch would resolve `..`, turn `\` into `/` and
 * re-encode): how an attacker spells a path.
 */
export function rawRequest(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path: target, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
