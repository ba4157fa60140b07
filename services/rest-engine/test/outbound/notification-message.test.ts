/**
 * What a flow task may hand kafka.notification / nats.notification, whatever its mapping built
 * (fast-check): the input is either a record within the bounds, or a 400 / 413 flow exception,
 * never another error; and what is accepted is what the brokers can carry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppException } from '@gatehouse/functions';
import fc from 'fast-check';
import { kafkaNotification, natsNotification } from '../../src/outbound/notification-message.ts';

const limits = { maxBytes: 2048, maxHeaders: 4 };

const anyInput = fc.oneof(
  fc.anything(),
  fc.record(
    {
      topic: fc.oneof(fc.string(), fc.stringMatching(/^[a-z.*>]{0,12}$/), fc.integer()),
      subject: fc.oneof(fc.string(), fc.stringMatching(/^[a-z.*> ]{0,12}$/)),
      key: fc.oneof(fc.string(), fc.integer(), fc.object()),
      headers: fc.oneof(
        fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.object())),
        fc.anything(),
      ),
      body: fc.oneof(
        fc.string({ maxLength: 3000 }),
        fc.jsonValue(),
        fc.uint8Array().map((a) => Buffer.from(a)),
      ),
      schema: fc.oneof(fc.string(), fc.integer()),
    },
    { requiredKeys: [] },
  ),
);

function outcome(read: () => ReturnType<typeof kafkaNotification>) {
  try {
    return read();
  } catch (err) {
    assert.ok(isAppException(err), `not a flow exception: ${String(err)}`);
    assert.ok(err.status === 400 || err.status === 413, `status ${err.status}`);
    return undefined;
  }
}

describe('notification input', () => {
  for (const [name, read] of [
    ['kafka.notification', kafkaNotification],
    ['nats.notification', natsNotification],
  ] as const) {
    it(`${name}: a bounded record a broker can carry, or a 400 / 413`, () => {
      fc.assert(
        fc.property(anyInput, (input) => {
          const n = outcome(() => read(input, limits));
          if (n === undefined) return;
          const headers = Object.entries(n.message.headers ?? {});
          assert.ok(headers.length <= limits.maxHeaders + 1, 'the headers (content-type may be added)');
          const bytes = headers.reduce((sum, [k, v]) => sum + k.length + Buffer.byteLength(v), 0);
          assert.ok(
            n.message.value.length + bytes + Buffer.byteLength(n.message.key ?? '') <= limits.maxBytes,
          );
          for (const [k, v] of headers) {
            assert.match(k, /^[!-9;-~]+$/);
            assert.doesNotMatch(v, /[\r\n\0]/);
          }
          assert.doesNotMatch(n.topic, /[\s*>]|^$/);
        }),
        { numRuns: 2000 },
      );
    });
  }

  it("refuses the topics Kafka reserves ('.', '..')", () => {
    for (const topic of ['.', '..'])
      assert.throws(
        () => kafkaNotification({ topic, body: 'x' }, limits),
        (err: unknown) => isAppException(err) && err.status === 400,
      );
  });

  it('keeps a header map with __proto__ as data', () => {
    const input = JSON.parse('{"topic":"t","body":"x","headers":{"__proto__":"1","a":"2"}}') as unknown;
    const n = kafkaNotification(input, limits);
    assert.deepEqual(Object.entries(n.message.headers ?? {}), [
      ['__proto__', '1'],
      ['a', '2'],
    ]);
    assert.equal(({} as Record<string, unknown>)['a'], undefined);
  });
});
