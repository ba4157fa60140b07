/** A push hub on the memory bus and store, listening on free ports, for the transport tests. */
import { readFileSync } from 'node:fs';
import { authConfig, blacklistKey, createAuthFromConfig, signJwt, withExpiry } from '@gatehouse/auth';
import { type Bus, MemoryBus } from '@gatehouse/bus';
import { streamEventHeaders } from '@gatehouse/cloudevents';
import {
  commonConfig,
  createLogger,
  createRegistry,
  Health,
  loadConfig,
  startHost,
  tlsSettingsFrom,
} from '@gatehouse/service-kit';
import { selfSignedCertificate } from '@gatehouse/testkit';
import { MemoryStore, type Store } from '@gatehouse/store';
import { createPushHub, pushHubConfig } from '../src/index.ts';

export const jwtSecret = 'test-secret-for-the-hub-suite';

export const extractors = {
  greeting: {
    name: {
      stable_field_index: 0,
      event: { json_pointer: '/data/name' },
      jwt: { json_pointer: '/username' },
    },
  },
};

export type HubFixture = Awaited<ReturnType<typeof startHubFixture>>;

/**
 * `shared` lets two hubs (two "replicas") meet on one memory bus and store (a Redis store where a
 * test measures Redis), and gives them a control bus of their own when a test cuts it. `fanoutBus`
 * puts the fan-out stream on another bus (a real broker; the test closes it). With `tls`, the edge also serves HTTPS and HTTP/2 (a certificate made for
 * the run, for 127.0.0.1): `tlsUrl`, `ca`.
 */
export async function startHubFixture(
  env: Record<string, string> = {},
  shared?: { bus: MemoryBus; store: Store; controlBus?: Bus; lifecycleBus?: Bus },
  options: { tls?: boolean; fanoutBus?: Bus } = {},
) {
  const cert = options.tls ? selfSignedCertificate() : undefined;
  const bus = shared?.bus ?? new MemoryBus();
  const store = shared?.store ?? new MemoryStore();
  const config = loadConfig(
    { ...commonConfig, ...authConfig, ...pushHubConfig },
    {
      JWT_SECRET_KEY: jwtSecret,
      EXTRACTORS: JSON.stringify(extractors),
      TOKEN_SECRET: 'a-token-secret-for-tests',
      SHUTDOWN_DRAIN_TIMEOUT_MS: '500',
      ...env,
    },
  );
  const auth = createAuthFromConfig(config, store);
  await auth.start();
  const logger = createLogger({ name: 'hub-test', level: 'silent' });
  const registry = createRegistry();
  const health = new Health();
  const service = createPushHub(config, {
    fanoutBus: options.fanoutBus ?? bus,
    controlBus: shared?.controlBus ?? bus,
    store,
    auth,
    replica: env.REPLICA_ID ?? 'replica-1',
    logger,
    registry,
    health,
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    ...(shared?.lifecycleBus && { lifecycleBus: shared.lifecycleBus }),
  });
  const host = await startHost({
    services: [service],
    logger,
    registry,
    health,
    host: '127.0.0.1',
    publicPort: 0,
    apiPort: 0,
    drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT_MS,
    closeables: shared ? [auth] : [auth, bus, store],
    tls:
      cert &&
      tlsSettingsFrom({
        HTTPS_CERTFILE: cert.certFile,
        HTTPS_KEYFILE: cert.keyFile,
        HTTPS_KEYFILE_PASS: undefined,
        INBOUND_HTTPS_PORT: 0,
      }),
  });
  const url = `http://127.0.0.1:${host.publicPort}`;
  return {
    url,
    tlsUrl: `https://127.0.0.1:${host.publicTlsPort}`,
    ca: cert && readFileSync(cert.certFile),
    apiUrl: `http://127.0.0.1:${host.apiPort}`,
    wsUrl: url.replace('http', 'ws'),
    bus,
    store,
    hub: service.hub,
    /** Puts a CloudEvent on the fan-out stream, as the publisher would; resolves with its position. */
    publish: (type: string, data: unknown, extra: Record<string, unknown> = {}) => {
      const event = { specversion: '1.0', id: crypto.randomUUID(), source: 'test', type, data, ...extra };
      // With the headers the publisher gives it (type, source and id): the hub routes by them.
      return bus.publish('gw.events', { value: JSON.stringify(event), headers: streamEventHeaders(event) });
    },
    jwt: (claims: Record<string, unknown>) => signJwt(withExpiry(claims), { alg: 'HS256', key: jwtSecret }),
    blacklist: (sessionId: string) => store.set(blacklistKey(sessionId), '1', { ttlSeconds: 60 }),
    /** The value of a `gw_` counter or gauge with the given labels (0 when absent). */
    metric: async (name: string, labels = '') => {
      const text = await (await fetch(`http://127.0.0.1:${host.apiPort}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
      return line ? Number(line.split(' ').at(-1)) : 0;
    },
    stop: () => host.stop(),
  };
}

export const subs = (list: unknown) => encodeURIComponent(JSON.stringify(list));
