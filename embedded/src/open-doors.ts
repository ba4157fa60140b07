/**
 * What `make run` leaves open on its defaults: on a laptop that is the point (post an event with
 * curl, subscribe from a page, define an API), so it starts open, and says so at start in one
 * warning naming each door and the setting that closes it. docker-compose.yml and the chart do not
 * start this way: they ask the operator to choose (docs/security.md, "Before production").
 */
import type { AccessCheckMode } from '@gatehouse/auth';

export interface AccessSettings {
  SUBMISSION_CHECK: AccessCheckMode;
  SUBSCRIPTION_CHECK: AccessCheckMode;
  INTERNAL_API_TOKEN: string | undefined;
}

/** The open-gateway warning, or undefined when every door is closed. */
export function openGatewayWarning(config: AccessSettings): string | undefined {
  const doors: string[] = [];
  if (config.SUBMISSION_CHECK === 'no_check')
    doors.push('anyone may push events to every browser (SUBMISSION_CHECK=no_check)');
  if (config.SUBSCRIPTION_CHECK === 'no_check')
    doors.push('anyone may subscribe to every event type (SUBSCRIPTION_CHECK=no_check)');
  if (config.INTERNAL_API_TOKEN === undefined)
    doors.push(
      'anyone who reaches the internal API may define APIs, post messages and kill sessions (no INTERNAL_API_TOKEN)',
    );
  if (doors.length === 0) return undefined;
  return `this gateway is open: ${doors.join('; ')}. Fine on a laptop; before anyone else can reach it, see docs/security.md ("Before production")`;
}
