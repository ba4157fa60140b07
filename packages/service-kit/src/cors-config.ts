/** The CORS settings of the services with a public, browser-facing surface. */
import { CorsPolicy } from './cors.ts';
import { commaSeparated, type Field } from './env-config.ts';

export const corsConfig = {
  CORS_ALLOWED_ORIGINS: corsOrigins(
    'origins (scheme://host[:port], or scheme://*.domain) whose browser pages may call the public endpoints with credentials (cookies); each is echoed with Access-Control-Allow-Credentials and Vary: Origin. Empty: Access-Control-Allow-Origin * without credentials',
  ),
  CORS: retiredCors(),
};

/** A comma-separated origin list, parsed into the policy; empty items are dropped. */
function corsOrigins(description: string): Field<CorsPolicy> {
  return {
    description,
    defaultText: '(empty)',
    parse(raw) {
      return new CorsPolicy(commaSeparated(raw));
    },
  };
}

/**
 * The former single-origin setting. It meant `*` or one origin, always with credentials; reading
 * it as the new list silently would change who gets credentials, so any other value than `*` (the
 * same as no list) stops start-up with a message saying what replaced it.
 */
function retiredCors(): Field<undefined> {
  return {
    description: 'no longer read: replaced by CORS_ALLOWED_ORIGINS (only `*` or unset is accepted)',
    defaultText: '(unset)',
    parse(raw) {
      if (raw === undefined || raw === '*') return undefined;
      throw new Error('is replaced by CORS_ALLOWED_ORIGINS (a comma-separated list of origins)');
    },
  };
}
