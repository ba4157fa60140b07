/**
 * The topology of the kill tests, as separate processes on real Redis: two push-hub replicas and
 * the blacklist service, sharing one store namespace, fan-out topic and control bus, with the
 * session id read from `/sid` (not `jti`), so the tests prove both sides use JWT_SESSION_FIELD.
 */
import assert from 'node:assert/strict';
import { signJwt } from '@gatehouse/auth';
import { dependencyAddress, type ServiceProcess, spawnService, uniqueName } from '@gatehouse/testkit';

const jwtSecret = 'blacklist-suite-jwt-secret-of-32-bytes-or-more';

export interface GatewayProcesses {
  hubs: ServiceProcess[];
  blacklist: ServiceProcess;
  /** Store namespace of this run (STORE_KEY_PREFIX). */
  keyPrefix: string;
}

export async function startGatewayProcesses(): Promise<GatewayProcesses> {
  const keyPrefix = `${uniqueName('gw-bl')}:`;
  const shared = {
    STORE: 'redis',
    REDIS_URL: dependencyAddress.redisUrl,
    STORE_KEY_PREFIX: keyPrefix,
  };
  const hubEnv = {
    ...shared,
    FANOUT_BUS: 'redis',
    CONTROL_BUS: 'redis',
    FANOUT_TOPIC: uniqueName('gw.events.blacklist-test'),
    JWT_SECRET_KEY: jwtSecret,
    JWT_SESSION_FIELD: '/sid',
    TOKEN_SECRET: 'blacklist-suite-shared-token-secret',
    LONGPOLL_TIMEOUT: '3s',
  };
  const [hubA, hubB, blacklist] = await Promise.all([
    spawnService({
      entry: 'services/push-hub/src/main.ts',
      publicPort: true,
      env: { ...hubEnv, REPLICA_ID: 'hub-a' },
    }),
    spawnService({
      entry: 'services/push-hub/src/main.ts',
      publicPort: true,
      env: { ...hubEnv, REPLICA_ID: 'hub-b' },
    }),
    spawnService({ entry: 'services/blacklist/src/main.ts', env: shared }),
  ]);
  return { hubs: [hubA!, hubB!], blacklist: blacklist!, keyPrefix };
}

export async function stopGatewayProcesses(p: GatewayProcesses | undefined): Promise<void> {
  if (!p) return;
  await Promise.all([...p.hubs, p.blacklist].map((s) => s.stop()));
}

/** A token of session `sid`, whose `jti` is something else. */
export function sessionToken(sid: string): string {
  return signJwt(
    { sid, jti: `jti-of-${sid}`, username: 'someone', exp: Math.floor(Date.now() / 1000) + 3600 },
    { alg: 'HS256', key: jwtSecret },
  );
}

export async function blacklistSession(
  blacklist: ServiceProcess,
  sessionId: string,
  validityInSeconds: number,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${blacklist.apiUrl}/v3/session-blacklist`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, validityInSeconds }),
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return JSON.parse(text);
}

/** GET /v3/session-blacklist/<id>: the entry, or undefined on 404. */
export async function blacklistEntry(
  blacklist: ServiceProcess,
  sessionId: string,
): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${blacklist.apiUrl}/v3/session-blacklist/${encodeURIComponent(sessionId)}`);
  const text = await res.text();
  if (res.status === 404) return undefined;
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

/**
 * The value of the first sample in a process's /metrics that starts with `sample`: a metric name,
 * or a name with its first labels (`gw_x_total{version="v3"`).
 */
export async function metricValue(service: ServiceProcess, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${service.apiUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(sample) && ' {,'.includes(l[sample.length]!));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}
