/**
 * The type a non-CloudEvent source message is wrapped into: WRAPPED_EVENT_TYPE, else its topic's
 * name. One in the gateway's own namespace (`gw.…`) would have every wrapped message dropped as a
 * forged gateway event (source-consumers.ts), so such a setting is refused at start instead.
 */
import { isGatewayEventType } from '@gatehouse/cloudevents';
import { ConfigError } from '@gatehouse/service-kit';

export function wrappedTypeOf(topic: string, configured: string | undefined): string {
  return configured ?? topic;
}

/** Throws ConfigError naming every source topic whose wrapped messages would get a reserved type. */
export function checkWrappedTypes(topics: readonly string[], configured: string | undefined): void {
  const reserved = [...new Set(topics.map((t) => wrappedTypeOf(t, configured)).filter(isGatewayEventType))];
  if (reserved.length === 0) return;
  throw new ConfigError([
    configured !== undefined
      ? `WRAPPED_EVENT_TYPE ${JSON.stringify(configured)} is in the gateway's own namespace (gw.…): wrapped source messages would be dropped; choose another type`
      : `source topics ${reserved.map((t) => JSON.stringify(t)).join(', ')} start with gw.: their wrapped messages would take that name as type, which is the gateway's own namespace; set WRAPPED_EVENT_TYPE`,
  ]);
}
