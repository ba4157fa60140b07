/** A push hub or a publisher as its own process, with a public port, given a minute to be ready. */
import { type ServiceProcess, spawnService } from '@gatehouse/testkit';

const startService = (entry: string, name: string, env: Record<string, string>): Promise<ServiceProcess> =>
  spawnService({ entry, name, publicPort: true, env, readyTimeoutMs: 60_000 });

export const startHub = (name: string, env: Record<string, string>) =>
  startService('services/push-hub/src/main.ts', name, env);

export const startPublisher = (name: string, env: Record<string, string>) =>
  startService('services/publisher/src/main.ts', name, env);
