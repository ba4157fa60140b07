/**
 * What every service's start-up does with auth: build it from the settings, log its warnings
 * (development secret, no key …), log later JWKS refresh failures, and start it.
 */
import type { Logger } from '@gatehouse/service-kit';
import type { Store } from '@gatehouse/store';
import { type Auth, type AuthConfig, createAuthFromConfig } from './auth-config.ts';

export async function startAuth(config: AuthConfig, store: Store, logger: Logger): Promise<Auth> {
  const auth = createAuthFromConfig(config, store, {
    onJwksError: (err) => logger.warn({ err }, 'JWKS refresh failed; keeping the previous keys'),
  });
  for (const warning of auth.warnings) logger.warn(warning);
  await auth.start();
  return auth;
}
