/**
 * The pieces of the flow-adapter tests that run the REST engine as its own process (src/main.ts, as
 * deployed): the engine started on the fixture application with its adapter file, and the HTTP sink
 * the fixture's flow reports every finished record to (`{ id }`), counting arrivals per id.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServiceProcess, spawnService } from '@gatehouse/testkit';
import { freePort } from '../engine-fixture.ts';
import { fixtureApp } from './kafka-fixture.ts';

export interface CountingSink {
  url: string;
  /** Arrivals per record id, in arrival order of first sight. */
  arrivals: Map<string, number>;
  distinct(): number;
  /** Ids that arrived more than once. */
  duplicates(): number;
  close(): Promise<void>;
}

export async function startCountingSink(): Promise<CountingSink> {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: string };
      arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    arrivals,
    distinct: () => arrivals.size,
    duplicates: () => [...arrivals.values()].filter((n) => n > 1).length,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The engine as its own process on the fixture application; `env` names the adapter file and brokers. */
export async function startEngineProcess(
  sinkUrl: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  return spawnService({
    entry: 'services/rest-engine/src/main.ts',
    env: {
      LOG_LEVEL: 'warn',
      REST_CONFIG_FOLDER: fixtureApp,
      REST_SERVER_PORT: String(await freePort()),
      SINK_URL: sinkUrl,
      ...env,
    },
  });
}
