/**
 * A structured JSON CloudEvent from a producer without an HTTP request of its own (a flow's
 * `gatehouse.event.publish`), read under the rules of `POST /_gw/v1/events`: at most MAX_EVENT_BYTES
 * and MAX_EVENT_KEYS (counted on the bytes before parsing; 413), a valid CloudEvent nested no deeper
 * than MAX_JSON_DEPTH (400), outside the gateway's namespaces (400), allowed by SUBMISSION_CHECK
 * (403). Each refusal is an EventRefusedError with the status the events endpoint answers.
 */
import {
  type CloudEvent,
  InvalidCloudEventError,
  parseJsonEvent,
  UnsupportedCloudEventError,
} from '@gatehouse/cloudevents';
import {
  assertJsonDepth,
  exceedsJsonMembers,
  JsonTooDeepError,
  JsonTooManyMembersError,
} from '@gatehouse/service-kit';
import { reservedEventProblem } from './reserved-event.ts';
import type { SubmissionCheck } from './submission-check.ts';

export type RefusalReason = 'invalid' | 'unsupported' | 'too_large' | 'denied';

const statusOf: Record<RefusalReason, number> = {
  invalid: 400,
  unsupported: 415,
  too_large: 413,
  denied: 403,
};

export class EventRefusedError extends Error {
  override readonly name = 'EventRefusedError';
  readonly reason: RefusalReason;
  readonly status: number;

  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.reason = reason;
    this.status = statusOf[reason];
  }
}

export interface EventLimits {
  maxEventBytes: number;
  maxEventKeys: number;
  maxJsonDepth: number;
}

/** The event the JSON stands for, or an EventRefusedError saying why not. */
export function readSubmittedEvent(json: Buffer, limits: EventLimits): CloudEvent {
  if (json.length > limits.maxEventBytes)
    throw new EventRefusedError(
      'too_large',
      `The event is larger than MAX_EVENT_BYTES (${limits.maxEventBytes})`,
    );
  if (exceedsJsonMembers(json, limits.maxEventKeys))
    throw new EventRefusedError(
      'too_large',
      new JsonTooManyMembersError('The event', 'MAX_EVENT_KEYS', limits.maxEventKeys).message,
    );
  try {
    const event = parseJsonEvent(json);
    assertJsonDepth(event, limits.maxJsonDepth, 'the event');
    const reserved = reservedEventProblem(event);
    if (reserved) throw new EventRefusedError('invalid', reserved);
    return event;
  } catch (err) {
    if (err instanceof InvalidCloudEventError || err instanceof JsonTooDeepError)
      throw new EventRefusedError('invalid', err.message);
    if (err instanceof UnsupportedCloudEventError) throw new EventRefusedError('unsupported', err.message);
    throw err;
  }
}

/** Resolves when SUBMISSION_CHECK allows the producer of `authorization` to submit the event. */
export async function assertSubmissionAllowed(
  check: SubmissionCheck,
  authorization: string | undefined,
  event: CloudEvent,
): Promise<void> {
  if (!(await check(authorization, event))) throw new EventRefusedError('denied', 'Submission denied.');
}
