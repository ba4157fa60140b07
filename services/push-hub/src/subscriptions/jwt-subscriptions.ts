/**
 * Subscriptions inferred from JWT claims: for every event type whose extractor fields name a
 * `jwt.json_pointer`, one subscription whose single AND-clause holds each field that resolves in
 * the claims. A type where no pointer resolves yields no subscription.
 */
import { readJsonPointer } from '@gatehouse/auth';
import type { ExtractorConfig } from './extractor-config.ts';
import type { Subscription } from './subscription.ts';

export function subscriptionsFromClaims(
  claims: Record<string, unknown>,
  extractors: ExtractorConfig,
): Subscription[] {
  const subs: Subscription[] = [];
  for (const [eventType, fields] of extractors) {
    const clause: Record<string, unknown> = {};
    for (const f of fields) {
      if (f.jwtPointer === undefined) continue;
      const value = readJsonPointer(claims, f.jwtPointer);
      if (value !== undefined) clause[f.name] = value;
    }
    if (Object.keys(clause).length > 0) subs.push({ eventType, oneOf: [clause] });
  }
  return subs;
}
