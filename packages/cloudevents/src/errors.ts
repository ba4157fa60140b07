/**
 * The two ways reading a CloudEvent can fail. A service answers InvalidCloudEventError with 400 and
 * UnsupportedCloudEventError with 415 (or 400), using the error's message as the body.
 */

/** Which rule an attribute broke; stable, so callers and tests can match on it. */
export type ProblemRule =
  | 'required'
  | 'type'
  | 'empty'
  | 'character'
  | 'specversion'
  | 'format'
  | 'name'
  | 'exclusive'
  | 'json'
  /** A type or source of the gateway's own namespace (gateway-namespace.ts). */
  | 'reserved'
  /** An event type holding a wildcard of type patterns (type-pattern.ts). */
  | 'wildcard';

export interface CloudEventProblem {
  /** The attribute (or `event` for the whole value, `body` for the message body). */
  attribute: string;
  rule: ProblemRule;
  /** A sentence a client can act on, naming the attribute and the rule. */
  message: string;
}

export class InvalidCloudEventError extends Error {
  override readonly name = 'InvalidCloudEventError';
  readonly problems: readonly CloudEventProblem[];

  constructor(problems: readonly CloudEventProblem[]) {
    super(`invalid CloudEvent: ${problems.map((p) => p.message).join('; ')}`);
    this.problems = problems;
  }
}

/** Why an otherwise well-formed message cannot be read. */
export type UnsupportedReason = 'batch-mode' | 'event-format' | 'content-type';

export class UnsupportedCloudEventError extends Error {
  override readonly name = 'UnsupportedCloudEventError';
  readonly reason: UnsupportedReason;

  constructor(reason: UnsupportedReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export function problem(attribute: string, rule: ProblemRule, message: string): CloudEventProblem {
  return { attribute, rule, message };
}
