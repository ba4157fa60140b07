/**
 * publishOnFanout on the memory bus: the event as one JSON line with the stream headers the hubs
 * read, its type as its route when routed, and a bus that refuses makes the publish reject.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBus, type Message } from '@gatehouse/bus';
import { publishOnFanout } from '../src/index.ts';

const event = {
  specversion: '1.0',
  id: 'e1',
  type: 'order.shipped',
  source: '/shop',
  data: { n: 1 },
} as const;

describe('publishOnFanout', () => {
  it('writes the event with its stream headers, routed by type when asked', async () => {
    const bus = new MemoryBus();
    const seen: Message[] = [];
    const routes: Array<string | undefined> = [];
    const publish = bus.publish.bind(bus);
    bus.publish = (topic, message, options) => {
      routes.push(options?.route);
      return publish(topic, message, options);
    };
    await bus.subscribe('gw.events', (m) => void seen.push(m));
    const json = await publishOnFanout({ bus, topic: 'gw.events', routed: true, component: 'test' }, event);
    await publishOnFanout(
      { bus, topic: 'gw.events', routed: false, component: 'test' },
      { ...event, id: 'e2' },
    );
    assert.deepEqual(JSON.parse(json), event);
    assert.equal(seen.length, 2);
    assert.deepEqual(JSON.parse(seen[0]!.value.toString()), event);
    assert.ok(Object.keys(seen[0]!.headers).length > 0, 'the stream headers');
    assert.deepEqual(routes, ['order.shipped', undefined]);
    await bus.close();
  });

  it('rejects when the bus does', async () => {
    const bus = new MemoryBus();
    await bus.close();
    await assert.rejects(
      publishOnFanout({ bus, topic: 't', routed: false, component: 'test' }, event),
      /closed/,
    );
  });
});
