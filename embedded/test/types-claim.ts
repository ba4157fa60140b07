/** What the tests of SUBSCRIPTION_TYPES_CLAIM share: the gateway's settings and reading its events. */
import { ephemeralGatewaySettings } from '../src/index.ts';

/** A gateway that takes the types a subscriber may ask for from its JWT's `/types` claim. */
export const typesClaimSettings = (jwtKey: string) => ({
  ...ephemeralGatewaySettings,
  JWT_SECRET_KEY: jwtKey,
  SUBSCRIPTION_CHECK: 'jwt_validation',
  SUBSCRIPTION_TYPES_CLAIM: '/types',
});

/** The types of the events a client got, the gateway's own (`gw.*`) left out. */
export const typesIn = (events: Array<Record<string, unknown>>) =>
  events.map((e) => e['type'] as string).filter((t) => !t.startsWith('gw.'));
