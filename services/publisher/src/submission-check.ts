/**
 * SUBMISSION_CHECK for `POST /_gw/v1/events`: the access check given the caller's Bearer tokens and
 * the event; with SUBMISSION_SOURCE_CLAIM, a valid token must also name the event's source.
 */
import type { IncomingMessage } from 'node:http';
import { type AccessCheck, parseAuthorizationHeader } from '@gatehouse/auth';
import type { CloudEvent } from '@gatehouse/cloudevents';
import type { SubmissionCheck } from './events-endpoint.ts';
import { claimAllowsSource, type SourceClaim } from './source-claim.ts';

export function submissionCheckFrom(
  check: AccessCheck,
  sourceClaim: SourceClaim | undefined,
): SubmissionCheck {
  return (req: IncomingMessage, event: CloudEvent) =>
    check({
      jwts: parseAuthorizationHeader(req.headers.authorization).bearerTokens,
      authorization: req.headers.authorization,
      body: JSON.stringify(event),
      allows: sourceClaim && ((claims) => claimAllowsSource(sourceClaim(claims), event.source)),
    });
}
