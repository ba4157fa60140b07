import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus, readPublishedAt } from '@gatehouse/bus';
import { MemoryStore, StoreUnavailableError } from '@gatehouse/store';
import { waitFor } from '@gatehouse/testkit';
import { startPublisherFixture } from './publisher-fixture.ts';

type Fixture = Awaited<ReturnType<typeof startPublisherFixture>>;
const event = { specversion: '1.0', id: 'e-1', type: 'greeting', source: '/test', data: { name: 'alice' } };

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe('event endpoints', () => {
  let f: Fixture;
  before(async () => {
    f = await startPublisherFixture({ MAX_EVENT_BYTES: '2048' });
  });
  after(() => f.stop());

  it('accepts a structured event on the public and the internal endpoints and puts it on the fan-out stream', async () => {
    const urls = [
      `${f.edge}/_gw/v1/events`,
      `${f.api}/v3/messages`,
      `${f.api}/v2/messages`,
      `${f.api}/messages`,
    ];
    for (const [i, url] of urls.entries()) {
      const posted = { ...event, id: `each-endpoint-${i}` };
      const r = await post(url, JSON.stringify(posted), { 'content-type': 'application/cloudevents+json' });
      assert.equal(r.status, 202, `${url}: ${r.text}`);
      assert.deepEqual(JSON.parse(r.text), posted);
    }
    await waitFor(() => f.fanout.length === 4);
    assert.deepEqual(f.events()[0], { ...event, id: 'each-endpoint-0' });
  });

  it('stamps each fan-out event with its publish time, for the hubs to measure their delay', async () => {
    const before = Date.now();
    const r = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'stamped' }), {
      'content-type': 'application/cloudevents+json',
    });
    assert.equal(r.status, 202, r.text);
    const message = await waitFor(() =>
      f.fanout.find((m) => (JSON.parse(m.value.toString()) as { id: string }).id === 'stamped'),
    );
    const publishedAt = readPublishedAt(message.headers);
    assert.ok(
      publishedAt !== undefined && publishedAt >= before && publishedAt <= Date.now(),
      `${publishedAt}`,
    );
  });

  it('reads binary mode and application/json without ce-specversion as structured', async () => {
    const binary = await post(`${f.api}/v3/messages`, '{"n":1}', {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'b-1',
      'ce-type': 'binary.type',
      'ce-source': '/bin',
    });
    assert.equal(binary.status, 202, binary.text);
    assert.deepEqual(JSON.parse(binary.text).data, { n: 1 });
    const fallback = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, specversion: '0.2' }), {
      'content-type': 'application/json',
    });
    assert.equal(fallback.status, 202, fallback.text);
  });

  it('answers an invalid event with 400 and usage text, and puts nothing on the stream', async () => {
    const before = f.fanout.length;
    const r = await post(`${f.api}/v3/messages`, '{"type":"x"}', { 'content-type': 'application/json' });
    assert.equal(r.status, 400);
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(r.text, /'id' is required/);
    assert.match(r.text, /^Usage: POST a CloudEvent/m);
    assert.equal(f.fanout.length, before);
  });

  it('answers 400 for CR/LF in an attribute (SSE frame injection) on the public and internal endpoints', async () => {
    const before = f.fanout.length;
    const forged = { ...event, type: 'greeting\nevent: admin.command\ndata: {"x":1}\n' };
    for (const url of [`${f.edge}/_gw/v1/events`, `${f.api}/v3/messages`, `${f.api}/v2/messages`]) {
      const r = await post(url, JSON.stringify(forged), { 'content-type': 'application/cloudevents+json' });
      assert.equal(r.status, 400, `${url}: ${r.text}`);
      assert.match(r.text, /'type' must not contain control characters \(such as CR or LF\)/);
    }
    const binary = await post(`${f.edge}/_gw/v1/events`, '{}', {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'b-2',
      'ce-type': 'greeting%0D%0Aevent:%20admin',
      'ce-source': '/bin',
    });
    assert.equal(binary.status, 400, binary.text);
    assert.equal(f.fanout.length, before);
  });

  it('answers 400 naming MAX_JSON_DEPTH for an event nested deeper, structured or binary, on every endpoint', async () => {
    const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
    const before = f.fanout.length;
    // The event object is one level: its data may nest 127 more.
    const within = await post(
      `${f.api}/v3/messages`,
      JSON.stringify({ ...event, id: 'nested-within', data: nested(127) }),
      {
        'content-type': 'application/cloudevents+json',
      },
    );
    assert.equal(within.status, 202, within.text);
    for (const url of [`${f.edge}/_gw/v1/events`, `${f.api}/v3/messages`, `${f.api}/messages`]) {
      const r = await post(url, JSON.stringify({ ...event, data: nested(128) }), {
        'content-type': 'application/cloudevents+json',
      });
      assert.equal(r.status, 400, `${url}: ${r.text}`);
      assert.match(r.text, /^the event nests objects and arrays deeper than MAX_JSON_DEPTH \(128\) levels/);
    }
    const binary = await post(`${f.edge}/_gw/v1/events`, JSON.stringify(nested(200)), {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': 'deep',
      'ce-type': 'greeting',
      'ce-source': '/bin',
    });
    assert.equal(binary.status, 400, binary.text);
    assert.equal(f.fanout.length, before + 1, 'only the event within the bound');
    assert.match(
      await f.metrics(),
      /gw_consumed_events_failed_total\{source="http",topic="http",reason="invalid"\} [1-9]/,
    );
  });

  it('answers 400 to an event claiming the source of a source topic (kafka/, nats/, kinesis/), structured or binary', async () => {
    const before = f.fanout.length;
    for (const source of ['kafka/gw', 'nats/orders.eu', 'kinesis/gw-outbound']) {
      const claimed = { ...event, id: '0-1234', source };
      for (const url of [`${f.edge}/_gw/v1/events`, `${f.api}/v3/messages`, `${f.api}/messages`]) {
        const r = await post(url, JSON.stringify(claimed), {
          'content-type': 'application/cloudevents+json',
        });
        assert.equal(r.status, 400, `${url} ${source}: ${r.text}`);
        assert.match(
          r.text,
          new RegExp(`'source' "${source}" is reserved: sources under kafka/, nats/, kinesis/`),
        );
      }
    }
    const binary = await post(`${f.edge}/_gw/v1/events`, '{}', {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': '0-7',
      'ce-type': 'greeting',
      'ce-source': 'kafka/gw',
    });
    assert.equal(binary.status, 400, binary.text);
    assert.equal(f.fanout.length, before, 'nothing reached the fan-out stream');
    for (const source of ['kafka', 'my-kafka/gw', '/kafka/gw', 'Kafka/gw']) {
      const r = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, source }), {
        'content-type': 'application/cloudevents+json',
      });
      assert.equal(r.status, 202, `${source} is not in the namespace: ${r.text}`);
    }
  });

  it('answers batch mode with 415, a too large body with 413, another method with 405', async () => {
    const batch = await post(`${f.api}/v3/messages`, `[${JSON.stringify(event)}]`, {
      'content-type': 'application/cloudevents-batch+json',
    });
    assert.equal(batch.status, 415);
    assert.match(batch.text, /batched CloudEvents HTTP transport binding mode is currently not supported/);
    const big = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, data: 'x'.repeat(4096) }), {
      'content-type': 'application/cloudevents+json',
    });
    assert.equal(big.status, 413);
    assert.equal((await fetch(`${f.edge}/_gw/v1/events`)).status, 405);
  });

  it('answers the CORS preflight of the public endpoint', async () => {
    const res = await fetch(`${f.edge}/_gw/v1/events`, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
  });

  it('counts what it took in', async () => {
    assert.match(await f.metrics(), /gw_consumed_events_total\{source="http",topic="http"\} \d+/);
  });
});

describe('SUBMISSION_CHECK', () => {
  it('with jwt_validation admits valid Bearer tokens only on the public endpoint (403 otherwise)', async () => {
    const f = await startPublisherFixture({ SUBMISSION_CHECK: 'jwt_validation' });
    try {
      const headers = { 'content-type': 'application/cloudevents+json' };
      const denied = await post(`${f.edge}/_gw/v1/events`, JSON.stringify(event), headers);
      assert.equal(denied.status, 403);
      assert.equal(denied.text, 'Submission denied.');
      const allowed = await post(`${f.edge}/_gw/v1/events`, JSON.stringify(event), {
        ...headers,
        authorization: `Bearer ${f.jwt({ sub: 'x' })}`,
      });
      assert.equal(allowed.status, 202);
      const internal = await post(`${f.api}/v3/messages`, JSON.stringify(event), headers);
      assert.equal(internal.status, 202, 'the internal endpoints are not checked');
    } finally {
      await f.stop();
    }
  });
});

describe('SUBMISSION_SOURCE_CLAIM', () => {
  let f: Fixture;
  before(async () => {
    f = await startPublisherFixture({
      SUBMISSION_CHECK: 'jwt_validation',
      SUBMISSION_SOURCE_CLAIM: '/gw/sources',
    });
  });
  after(() => f.stop());
  const submit = (source: string, claims: Record<string, unknown>) =>
    post(`${f.edge}/_gw/v1/events`, JSON.stringify({ ...event, source }), {
      'content-type': 'application/cloudevents+json',
      authorization: `Bearer ${f.jwt(claims)}`,
    });

  it('admits an event whose source the token names (exactly, or under an entry ending in *)', async () => {
    const alice = { sub: 'alice', gw: { sources: ['/chat/alice', '/users/alice/*'] } };
    for (const source of ['/chat/alice', '/users/alice/', '/users/alice/inbox/1']) {
      const r = await submit(source, alice);
      assert.equal(r.status, 202, `${source}: ${r.text}`);
    }
    assert.equal((await submit('/orders', { sub: 'backend', gw: { sources: '/orders' } })).status, 202);
  });

  it("answers 403 to a source the token does not name, and to a token without the claim, even beside another token's", async () => {
    const before = f.fanout.length;
    const alice = { sub: 'alice', gw: { sources: ['/chat/alice', '/users/alice/*'] } };
    for (const source of ['/orders', '/chat/alice/x', '/chat/bob', '/users/alicia', '/users/alice']) {
      const r = await submit(source, alice);
      assert.equal(r.status, 403, `${source}: ${r.text}`);
      assert.equal(r.text, 'Submission denied.');
    }
    for (const claims of [
      { sub: 'x' },
      { gw: { sources: [42, null] } },
      { gw: { sources: { '/orders': true } } },
    ])
      assert.equal((await submit('/orders', claims)).status, 403, JSON.stringify(claims));
    assert.equal(
      (await submit('/a*', { gw: { sources: ['*'] } })).status,
      202,
      'a lone * names every source',
    );
    const two = await post(`${f.edge}/_gw/v1/events`, JSON.stringify({ ...event, source: '/orders' }), {
      'content-type': 'application/cloudevents+json',
      authorization: `Bearer ${f.jwt(alice)}, Bearer ${f.jwt({ sub: 'y' })}`,
    });
    assert.equal(two.status, 403, two.text);
    assert.equal(f.fanout.length, before + 1);
  });

  it('stops the start unless SUBMISSION_CHECK is jwt_validation', async () => {
    /** The error the start fails with; a fixture that starts after all is stopped again. */
    const startFailure = (env: Record<string, string>) =>
      startPublisherFixture(env).then(
        async (started) => {
          await started.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
    assert.match(
      await startFailure({ SUBMISSION_SOURCE_CLAIM: '/gw/sources' }),
      /SUBMISSION_SOURCE_CLAIM needs SUBMISSION_CHECK=jwt_validation/,
    );
    assert.match(
      await startFailure({ SUBMISSION_CHECK: 'jwt_validation', SUBMISSION_SOURCE_CLAIM: 'gw' }),
      /SUBMISSION_SOURCE_CLAIM: JSON pointer must start with "\/"/,
    );
  });
});

describe('fan-out stream unavailable', () => {
  it('answers 503 and acknowledges nothing', async () => {
    const bus = new MemoryBus();
    const f = await startPublisherFixture({}, [], bus);
    try {
      await bus.close();
      const r = await post(`${f.api}/v3/messages`, JSON.stringify(event), {
        'content-type': 'application/cloudevents+json',
      });
      assert.equal(r.status, 503);
      assert.equal(r.headers.get('retry-after'), '1');
    } finally {
      await f.stop();
    }
  });
});

describe('an event id posted again', () => {
  const json = { 'content-type': 'application/cloudevents+json' };
  const copies = (f: Fixture, id: string) => f.events().filter((e) => e['id'] === id).length;

  it('answers 202 saying it is a duplicate, and puts no second copy on the fan-out stream', async () => {
    const f = await startPublisherFixture({ CORS_ALLOWED_ORIGINS: 'https://app.example' });
    try {
      const first = await post(`${f.edge}/_gw/v1/events`, JSON.stringify({ ...event, id: 'again' }), json);
      assert.equal(first.status, 202, first.text);
      assert.equal(first.headers.get('gatehouse-duplicate'), null);
      // Again, on the internal endpoint and from a page of another origin on the public one.
      const internal = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'again' }), json);
      const page = await post(`${f.edge}/_gw/v1/events`, JSON.stringify({ ...event, id: 'again' }), {
        ...json,
        origin: 'https://app.example',
      });
      for (const r of [internal, page]) {
        assert.equal(r.status, 202, r.text);
        assert.equal(r.headers.get('gatehouse-duplicate'), 'true');
        assert.deepEqual(JSON.parse(r.text), { ...event, id: 'again' });
      }
      assert.match(page.headers.get('access-control-expose-headers') ?? '', /gatehouse-duplicate/i);
      // The same id from another source, and another id, are events of their own.
      const otherSource = await post(
        `${f.api}/v3/messages`,
        JSON.stringify({ ...event, id: 'again', source: '/elsewhere' }),
        json,
      );
      assert.equal(otherSource.headers.get('gatehouse-duplicate'), null);
      await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'after' }), json);
      await waitFor(() => copies(f, 'after') === 1);
      assert.equal(copies(f, 'again'), 2, 'one copy per source');
      const duplicates = [
        ...(await f.metrics()).matchAll(
          /^gw_consumed_events_failed_total\{[^}]*reason="duplicate"[^}]*\} (\d+)$/gm,
        ),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
      assert.equal(duplicates, 2);
    } finally {
      await f.stop();
    }
  });

  it('takes the id again once EVENT_DEDUPE_WINDOW_SECONDS has passed, and every time with 0', async () => {
    const windowed = await startPublisherFixture({ EVENT_DEDUPE_WINDOW_SECONDS: '1' });
    const off = await startPublisherFixture({ EVENT_DEDUPE_WINDOW_SECONDS: '0' });
    try {
      for (const f of [windowed, off])
        await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'later' }), json);
      await new Promise((r) => setTimeout(r, 2_100));
      for (const f of [windowed, off]) {
        const r = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'later' }), json);
        assert.equal(r.headers.get('gatehouse-duplicate'), null);
        await waitFor(() => copies(f, 'later') === 2);
      }
      const r = await post(`${off.api}/v3/messages`, JSON.stringify({ ...event, id: 'later' }), json);
      assert.equal(r.headers.get('gatehouse-duplicate'), null);
      await waitFor(() => copies(off, 'later') === 3);
    } finally {
      await Promise.all([windowed.stop(), off.stop()]);
    }
  });

  it('does not count a post the fan-out stream refused: its retry is published', async () => {
    let refuse = true;
    const bus = new MemoryBus();
    const publish = bus.publish.bind(bus);
    bus.publish = async (topic, message) => {
      if (refuse) throw new Error('broker down');
      return publish(topic, message);
    };
    const f = await startPublisherFixture({}, [], bus);
    try {
      const refused = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'retried' }), json);
      assert.equal(refused.status, 503);
      refuse = false;
      const retried = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'retried' }), json);
      assert.equal(retried.status, 202);
      assert.equal(retried.headers.get('gatehouse-duplicate'), null);
      await waitFor(() => copies(f, 'retried') === 1);
    } finally {
      await f.stop();
    }
  });

  it('publishes without the check while the store is unreachable (the hubs still drop copies)', async () => {
    const store = new MemoryStore();
    const down = async () => {
      throw new StoreUnavailableError('redis down');
    };
    store.exists = down;
    store.set = down;
    const f = await startPublisherFixture({}, [], new MemoryBus(), store);
    try {
      for (let i = 0; i < 2; i++) {
        const r = await post(`${f.api}/v3/messages`, JSON.stringify({ ...event, id: 'unchecked' }), json);
        assert.equal(r.status, 202, r.text);
        assert.equal(r.headers.get('gatehouse-duplicate'), null);
      }
      await waitFor(() => copies(f, 'unchecked') === 2);
    } finally {
      await f.stop();
    }
  });
});
