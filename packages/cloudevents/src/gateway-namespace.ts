/**
 * The gateway's own event namespace: the types `gw.…` and the source `gatehouse` name the events the
 * push hub makes itself (the welcome pair with the connection token, the kill, the expiry, the
 * operator's close, the resync), which clients act on. A producer who could publish one could make
 * every subscriber swap its connection token or close for good, so no producer surface takes them
 * (publisher HTTP, source topics, proxy targets) and the hub drops any that reach its stream.
 *
 * The match is looser than any reader's: a reader compares `type` and `source` exactly, but a value
 * that only differs by case, surrounding white space or a compatibility form (fullwidth `ｇｗ.`) is
 * refused too, so no client that lower-cases or trims can be fooled either. The bare type `gw` is
 * not reserved: it is the default source topic name, which wrapped source messages take as type,
 * and no reader takes it for a gateway event.
 */
import type { CloudEvent } from './cloud-event.ts';
import { type CloudEventProblem, problem } from './errors.ts';

/** `source` of the events the push hub makes itself. */
export const GATEWAY_EVENT_SOURCE = 'gatehouse';

/** Types of the gateway's own events start with this. */
export const GATEWAY_TYPE_PREFIX = 'gw.';

/** Whether `type` is (or reads as) one of the gateway's own types. */
export function isGatewayEventType(type: unknown): boolean {
  return typeof type === 'string' && canonical(type).startsWith(GATEWAY_TYPE_PREFIX);
}

/** Whether `source` is (or reads as) the gateway's own source. */
export function isGatewaySource(source: unknown): boolean {
  return typeof source === 'string' && canonical(source) === GATEWAY_EVENT_SOURCE;
}

/** Whether the event has a type or source of the gateway's own namespace. */
export function inGatewayNamespace(event: Pick<CloudEvent, 'type' | 'source'>): boolean {
  return isGatewayEventType(event.type) || isGatewaySource(event.source);
}

/** Why a producer may not publish the event (its type, its source, or both); empty when it may. */
export function gatewayNamespaceProblems(event: Pick<CloudEvent, 'type' | 'source'>): CloudEventProblem[] {
  const problems: CloudEventProblem[] = [];
  if (isGatewayEventType(event.type))
    problems.push(
      problem(
        'type',
        'reserved',
        `'type' ${quote(event.type)} is reserved: types starting with ${GATEWAY_TYPE_PREFIX} (in any case) name the gateway's own events, so a producer may not use them`,
      ),
    );
  if (isGatewaySource(event.source))
    problems.push(
      problem(
        'source',
        'reserved',
        `'source' ${quote(event.source)} is reserved: it names the gateway's own events, so a producer may not use it`,
      ),
    );
  return problems;
}

/** NFKC (only needed beyond ASCII), trimmed, lower case: the value as the laxest reader would see it. */
function canonical(value: string): string {
  const folded = /[^\x00-\x7f]/.test(value) ? value.normalize('NFKC') : value;
  return folded.trim().toLowerCase();
}

function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
