/**
 * SUBMISSION_CHECK for every producer of events to frontends (`POST /_gw/v1/events`, a flow's
 * `gatehouse.event.publish`): the access check given the producer's Authorization header and the
 * event; with SUBMISSION_SOURCE_CLAIM, a valid token must also name the event's source.
 */
import { type AccessCheck, type Auth, createAccessCheck, parseAuthorizationHeader } from '@gatehouse/auth';
import type { CloudEvent } from '@gatehouse/cloudevents';
import type { ConfigOf, Logger } from '@gatehouse/service-kit';
import { checkSourceClaimMode, claimAllowsSource, type SourceClaim } from './source-claim.ts';
import type { submissionCheckConfig } from './submission-config.ts';

/** Decides whether a submission is allowed, given the producer's Authorization header. */
export type SubmissionCheck = (authorization: string | undefined, event: CloudEvent) => Promise<boolean>;

export function submissionCheckFrom(
  check: AccessCheck,
  sourceClaim: SourceClaim | undefined,
): SubmissionCheck {
  return (authorization, event) =>
    check({
      jwts: parseAuthorizationHeader(authorization).bearerTokens,
      authorization,
      body: JSON.stringify(event),
      allows: sourceClaim && ((claims) => claimAllowsSource(sourceClaim(claims), event.source)),
    });
}

/**
 * The check the settings describe; `auth` verifies tokens for jwt_validation. Throws a ConfigError
 * for SUBMISSION_SOURCE_CLAIM without jwt_validation.
 */
export function submissionCheckOf(
  config: ConfigOf<typeof submissionCheckConfig>,
  auth: Pick<Auth, 'verifyAndCheck'> | undefined,
  logger: Logger,
): SubmissionCheck {
  checkSourceClaimMode(config.SUBMISSION_SOURCE_CLAIM, config.SUBMISSION_CHECK);
  return submissionCheckFrom(
    createAccessCheck(config.SUBMISSION_CHECK, {
      verify: (jwt) => {
        if (auth === undefined) throw new Error('SUBMISSION_CHECK=jwt_validation needs token verification');
        return auth.verifyAndCheck(jwt);
      },
      timeoutMs: config.SUBMISSION_CHECK_TIMEOUT,
      onProblem: (p) => logger.warn(p, 'submission check failed; denying'),
    }),
    config.SUBMISSION_SOURCE_CLAIM,
  );
}
