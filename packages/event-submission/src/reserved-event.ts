/**
 * What no producer may publish: an event in the gateway's own namespace (`gw.…` types, the
 * `gatehouse` source: gateway-namespace.ts in @gatehouse/cloudevents) or with a source of the events
 * the publisher wraps from its source topics (wrapped-source.ts), or a type that reads as a
 * subscription pattern (`*` or `>` as a segment: type-pattern.ts in @gatehouse/cloudevents).
 */
import { type CloudEvent, gatewayNamespaceProblems, wildcardTypeProblems } from '@gatehouse/cloudevents';
import { reservedSourceProblem } from './wrapped-source.ts';

/** Why the event may not be published, or undefined when it may. */
export function reservedEventProblem(event: CloudEvent): string | undefined {
  const problems = [...gatewayNamespaceProblems(event), ...wildcardTypeProblems(event)].map((p) => p.message);
  const wrapped = reservedSourceProblem(event.source);
  if (wrapped) problems.push(wrapped);
  return problems.length > 0 ? problems.join('; ') : undefined;
}
