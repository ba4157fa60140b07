/** The publisher on a memory bus with free ports, plus a subscriber on the fan-out stream. */
import { authConfig, createAuthFromConfig, signJwt, withExpiry } from '@gatehouse/auth';
import { type Bus, type Message, MemoryBus } from '@gatehouse/bus';
import {
  commonConfig,
  createLogger,
  createRegistry,
  Health,
  loadConfig,
  startHost,
} from '@gatehouse/service-kit';
import { MemoryStore, type Store } from '@gatehouse/store';
import { createPublisher, publisherConfig, type SourceSpec } from '../src/index.ts';

export const jwtSecret = 'publisher-test-secret-long-enough-for-hs256';

export async function startPublisherFixture(
  env: Record<string, string> = {},
  sources: SourceSpec[] = [],
  bus: Bus = new MemoryBus(),
  store: Store = new MemoryStore(),
) {
  const config = loadConfig(
    { ...commonConfig, ...authConfig, ...publisherConfig },
    { JWT_SECRET_KEY: jwtSecret, TOKEN_SECRET: 'publisher-test-token-secret', ...env },
  );
  const auth = createAuthFromConfig(config, store);
  await auth.start();
  const logger = createLogger({ name: 'publisher-test', level: 'silent' });
  const registry = createRegistry();
  const fanout: Message[] = [];
  const sub = await bus.subscribe(config.FANOUT_TOPIC, (m) => void fanout.push(m));
  const host = await startHost({
    services: [
      createPublisher(config, {
        fanoutBus: bus,
        store,
        sources,
        auth,
        logger,
        registry,
        health: new Health(),
        maxJsonDepth: config.MAX_JSON_DEPTH,
      }),
    ],
    logger,
    registry,
    health: new Health(),
    host: '127.0.0.1',
    publicPort: 0,
    apiPort: 0,
    closeables: [auth, store],
  });
  return {
    edge: `http://127.0.0.1:${host.publicPort}`,
    api: `http://127.0.0.1:${host.apiPort}`,
    bus,
    fanout,
    events: () => fanout.map((m) => JSON.parse(m.value.toString()) as Record<string, unknown>),
    jwt: (claims: Record<string, unknown>) => signJwt(withExpiry(claims), { alg: 'HS256', key: jwtSecret }),
    metrics: async () => (await fetch(`http://127.0.0.1:${host.apiPort}/metrics`)).text(),
    async stop() {
      await sub.close();
      await host.stop();
      await bus.close();
    },
  };
}
