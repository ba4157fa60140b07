/**
 * Two push-hub processes on real Redis (fan-out bus, control bus and store, under the run's key
 * prefix), replicas `<run>-hub-a` and `<run>-hub-b`: the cluster the connections API's tests ask
 * through either replica. Started one after the other (each takes free ports), each put in `into` as
 * it comes up, so the test's `after` stops the first even when the second fails to start.
 */
import { dependencyAddress, type ServiceProcess, spawnService } from '@gatehouse/testkit';

export const replicaName = (run: string, i: number) => `${run}-hub-${'ab'[i]}`;

export async function startRedisHubPair(
  run: string,
  env: Record<string, string>,
  into: ServiceProcess[],
): Promise<[ServiceProcess, ServiceProcess]> {
  for (const i of [0, 1])
    into.push(
      await spawnService({
        entry: 'services/push-hub/src/main.ts',
        name: `hub-${'ab'[i]}`,
        publicPort: true,
        env: {
          FANOUT_BUS: 'redis',
          CONTROL_BUS: 'redis',
          STORE: 'redis',
          REDIS_URL: dependencyAddress.redisUrl,
          STORE_KEY_PREFIX: `${run}:`,
          ...env,
          REPLICA_ID: replicaName(run, i),
        },
        readyTimeoutMs: 60_000,
      }),
    );
  return into as [ServiceProcess, ServiceProcess];
}
