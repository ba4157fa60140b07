/**
 * SUBMISSION_SOURCE_CLAIM: which CloudEvents sources a token lets its holder post on
 * `/_gw/v1/events`. The claim at the pointer is a string or a list of strings; an entry names a
 * source exactly, or ends in `*` and names every source that starts with the rest (`/users/alice/*`;
 * a lone `*` allows any). A token without the claim allows none: the issuer decides who owns which
 * source, so one producer cannot post as another (CloudEvents name an event by source and id).
 */
import { compileJsonPointer, type JwtClaims } from '@gatehouse/auth';
import { ConfigError, type Field } from '@gatehouse/service-kit';

export type SourceClaim = (claims: JwtClaims) => unknown;

export function sourceClaimField(description: string): Field<SourceClaim | undefined> {
  return {
    description,
    defaultText: '(unset)',
    parse: (raw) => (raw === undefined || raw === '' ? undefined : compileJsonPointer(raw)),
  };
}

/** Whether the claim's value allows `source`. */
export function claimAllowsSource(value: unknown, source: string): boolean {
  const entries = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return entries.some(
    (entry) =>
      typeof entry === 'string' &&
      (entry.endsWith('*') ? source.startsWith(entry.slice(0, -1)) : entry === source),
  );
}

/** Pinning sources needs tokens: a check service sees the source itself, no_check sees no token. */
export function checkSourceClaimMode(claim: SourceClaim | undefined, mode: unknown): void {
  if (claim !== undefined && mode !== 'jwt_validation')
    throw new ConfigError([
      'SUBMISSION_SOURCE_CLAIM needs SUBMISSION_CHECK=jwt_validation (a check service gets the event, source included, and decides itself)',
    ]);
}
