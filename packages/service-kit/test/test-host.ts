/** A host for tests: quiet, on loopback ports the system picks, a short drain; options override. */
import {
  createLogger,
  createRegistry,
  Health,
  type HostOptions,
  type RunningHost,
  startHost,
} from '../src/index.ts';

export function startTestHost(options: Partial<HostOptions> = {}): Promise<RunningHost> {
  return startHost({
    services: [],
    logger: createLogger({ name: 'test', level: 'silent' }),
    registry: createRegistry(),
    health: new Health(),
    host: '127.0.0.1',
    apiPort: 0,
    drainTimeoutMs: 1000,
    ...options,
  });
}
