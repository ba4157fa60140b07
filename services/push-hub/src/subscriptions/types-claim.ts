/**
 * SUBSCRIPTION_TYPES_CLAIM: which event types a token lets its holder subscribe to. The claim at
 * the pointer is a string or a list of strings, each an event type or a type pattern
 * (`com.example.orders.*`). A subscription is allowed when one entry covers all it names: a type
 * the entry matches, or a pattern every type of which the entry matches (patternCovers). So a token
 * allowing `com.example.orders.*` allows `com.example.orders.created` and that pattern itself, and
 * never `com.example.>`, `>`, `*.*.*.*` or `com.example.orders.>`, which reach types it does not
 * allow. A pattern covered only by several entries together is refused: ask for the parts. A token
 * without the claim allows nothing; the subscriptions its claims infer (EXTRACTORS' `jwt`
 * pointers) are the issuer's own and need no entry.
 */
import { compileJsonPointer, type JwtClaims } from '@gatehouse/auth';
import { isTypePattern, patternCovers, typePatternProblem } from '@gatehouse/cloudevents';
import { ConfigError, type Field } from '@gatehouse/service-kit';
import type { Subscription } from './subscription.ts';

export type TypesClaim = (claims: JwtClaims) => unknown;

export function typesClaimField(description: string): Field<TypesClaim | undefined> {
  return {
    description,
    defaultText: '(unset)',
    parse: (raw) => (raw === undefined || raw === '' ? undefined : compileJsonPointer(raw)),
  };
}

/** Whether the claim's value allows every one of `subscriptions`. */
export function claimAllowsTypes(value: unknown, subscriptions: readonly Subscription[]): boolean {
  const entries = (typeof value === 'string' ? [value] : Array.isArray(value) ? value : []).filter(
    (entry): entry is string => typeof entry === 'string' && entry !== '' && !malformed(entry),
  );
  return subscriptions.every((s) => entries.some((entry) => patternCovers(entry, s.eventType)));
}

/** An entry that is no pattern (`a.>.b`) allows nothing: read as far as it goes it would allow `a.>`. */
function malformed(entry: string): boolean {
  return isTypePattern(entry) && typePatternProblem(entry, Number.POSITIVE_INFINITY) !== undefined;
}

/** Allowing types needs tokens: a check service sees the subscriptions itself, no_check sees no token. */
export function checkTypesClaimMode(claim: TypesClaim | undefined, mode: unknown): void {
  if (claim !== undefined && mode !== 'jwt_validation')
    throw new ConfigError([
      'SUBSCRIPTION_TYPES_CLAIM needs SUBSCRIPTION_CHECK=jwt_validation (a check service gets the subscriptions and decides itself)',
    ]);
}
