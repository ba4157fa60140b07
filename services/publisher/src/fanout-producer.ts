/**
 * The publisher's way onto the fan-out stream: publishOnFanout (@gatehouse/event-submission), with
 * the publisher's metrics of each event produced and of how long it took from receipt. A publish
 * the bus cannot deliver rejects, so the caller can answer 503 rather than acknowledge an event
 * that went nowhere.
 */
import type { Bus } from '@gatehouse/bus';
import type { CloudEvent } from '@gatehouse/cloudevents';
import { publishOnFanout } from '@gatehouse/event-submission';
import type { PublisherMetrics } from './publisher-metrics.ts';

export interface FanoutProducer {
  publish(event: CloudEvent, origin: { source: string; topic: string; receivedAt: bigint }): Promise<string>;
}

/** `routed` (FANOUT_ROUTING=interest): each event carries its type as its route (bus.ts). */
export function createFanoutProducer(
  bus: Bus,
  topic: string,
  metrics: PublisherMetrics,
  routed = false,
): FanoutProducer {
  const target = { bus, topic, routed, component: 'publisher' };
  return {
    async publish(event, origin) {
      try {
        const json = await publishOnFanout(target, event);
        metrics.producedOk(bus.kind, topic);
        metrics.consumedOk(
          origin.source,
          origin.topic,
          Number(process.hrtime.bigint() - origin.receivedAt) / 1e9,
        );
        return json;
      } catch (err) {
        metrics.producedFailed(bus.kind, topic);
        metrics.consumedFailed(origin.source, origin.topic, 'fanout_unavailable');
        throw err;
      }
    },
  };
}
