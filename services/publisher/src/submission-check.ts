/** SUBMISSION_CHECK for `POST /_gw/v1/events`: the access check given the caller's Bearer tokens and the event. */
import type { IncomingMessage } from 'node:http';
import { type AccessCheck, parseAuthorizationHeader } from '@gatehouse/auth';
import type { SubmissionCheck } from './events-endpoint.ts';

export function submissionCheckFrom(check: AccessCheck): SubmissionCheck {
  return (req: IncomingMessage, eventJson: string) =>
    check({
      jwts: parseAuthorizationHeader(req.headers.authorization).bearerTokens,
      authorization: req.headers.authorization,
      body: eventJson,
    });
}
