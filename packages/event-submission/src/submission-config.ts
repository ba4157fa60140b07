/**
 * The settings every producer of events to frontends reads from the same environment variables
 * (the publisher's `POST /_gw/v1/events`, the REST engine's `gatehouse.event.publish`), so one
 * deployment's rules hold on every way in.
 */
import { accessCheckField } from '@gatehouse/auth';
import { duration, int, oneOf, str } from '@gatehouse/service-kit';
import { sourceClaimField } from './source-claim.ts';

export const submissionCheckConfig = {
  SUBMISSION_CHECK: accessCheckField(
    "who may submit events to frontends (POST /_gw/v1/events, a flow's gatehouse.event.publish): no_check, jwt_validation, or the URL of a check service",
  ),
  SUBMISSION_SOURCE_CLAIM: sourceClaimField(
    'JSON pointer to the JWT claim naming the sources a token may submit (a string or a list; an entry ending in * is a prefix); needs SUBMISSION_CHECK=jwt_validation; unset: any source',
  ),
  SUBMISSION_CHECK_TIMEOUT: duration('time-out of an external submission check (denies on time-out)', '5s', {
    min: '100ms',
  }),
};

export const eventBoundsConfig = {
  MAX_EVENT_BYTES: int('largest accepted event in bytes (413 beyond)', 1024 * 1024, { min: 1024 }),
  MAX_EVENT_KEYS: int(
    'most object keys and array items, across every level, in a JSON event (413 beyond, counted on the bytes before parsing)',
    10_000,
    { min: 16 },
  ),
};

export const fanoutConfig = {
  FANOUT_TOPIC: str('the fan-out stream every hub replica consumes', 'gw.events'),
  FANOUT_ROUTING: oneOf(
    'interest: each event goes on the fan-out stream with its type as its route (NATS: subject <FANOUT_TOPIC>.~t.<type> of the one stream), so hubs with FANOUT_ROUTING=interest read only the types their clients want; all: unrouted (hubs read everything). Other buses ignore it',
    ['all', 'interest'],
    'all',
  ),
};

export const submissionConfig = { ...submissionCheckConfig, ...eventBoundsConfig, ...fanoutConfig };
