/**
 * Long-polling while subscriptions change, as a property (fast-check) against the embedded gateway,
 * through its public HTTP surface only: a client connects (with or without subscriptions), then
 * random sequences interleave `PUT …/longpolling/<token>/subscriptions`, polls (started, left
 * waiting, or awaited), `POST /_gw/v1/events` and pauses. Whatever the sequence:
 * - an event is never skipped: one whose type every subscription set in force from its
 *   publication on includes is delivered; one that none of them includes never is;
 * - events come in publish order, none twice;
 * - the client learns every change: the `gw.subscriptions_set` it gets follow the order of the
 *   changes, none twice, and the last is the last change's (changes made between two polls come as
 *   one, the latest: the record holds one list, services/push-hub/README.md "Long-polling").
 * (Issue 14 item 1: after a PUT, a held poll answered `events: []` past a matching event, and every
 * later event was skipped too.) PROPERTY_RUNS sets the runs (default 30); the seed is printed,
 * PROPERTY_SEED replays one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LongPollClient } from '@gatehouse/testkit';
import fc from 'fast-check';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '../src/index.ts';

const TYPES = ['a', 'b', 'c'];
const runs = Number(process.env['PROPERTY_RUNS'] ?? 30);
const seed = Number(process.env['PROPERTY_SEED'] ?? Date.now() % 2 ** 31);

type Action =
  | { kind: 'put'; types: string[] }
  | { kind: 'publish'; type: string }
  | { kind: 'poll' }
  | { kind: 'await' }
  | { kind: 'pause'; ms: number };

const typeSet = fc.subarray(TYPES);
const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: typeSet.map((types) => ({ kind: 'put', types }) as const), weight: 2 },
  { arbitrary: fc.constantFrom(...TYPES).map((type) => ({ kind: 'publish', type }) as const), weight: 4 },
  { arbitrary: fc.constant({ kind: 'poll' } as const), weight: 2 },
  { arbitrary: fc.constant({ kind: 'await' } as const), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 40 }).map((ms) => ({ kind: 'pause', ms }) as const), weight: 1 },
);

type CloudEvent = Record<string, unknown> & { type: string; data?: unknown };

describe('long-polling while subscriptions change (property, embedded gateway)', () => {
  let gw: EmbeddedGateway;
  let edge: string;
  before(async () => {
    gw = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      LONGPOLL_TIMEOUT: '300ms',
      // Each run makes a long-poll connection from 127.0.0.1, which lives a minute after its last poll.
      MAX_CONNECTIONS_PER_ADDRESS: '100000',
    });
    edge = `http://127.0.0.1:${gw.publicPort}`;
  });
  after(() => gw.stop());

  async function publish(type: string, n: number): Promise<void> {
    const res = await fetch(`${edge}/_gw/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: crypto.randomUUID(),
        source: 'property',
        type,
        data: { n },
      }),
    });
    assert.equal(res.status, 202, await res.text());
  }

  async function put(token: string, types: string[]): Promise<void> {
    const res = await fetch(`${edge}/_gw/v1/connection/longpolling/${token}/subscriptions`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscriptions: types.map((eventType) => ({ eventType })) }),
    });
    assert.equal(res.status, 204, await res.text());
  }

  /** One client at most one poll at a time, as a browser's long-poll loop. */
  function poller(client: LongPollClient) {
    const received: CloudEvent[] = [];
    let inFlight: Promise<void> | undefined;
    return {
      received,
      start() {
        inFlight ??= client.poll().then((events) => {
          received.push(...(events as CloudEvent[]));
          inFlight = undefined;
        });
      },
      settle: () => inFlight ?? Promise.resolve(),
    };
  }

  async function run(initial: string[] | null, actions: Action[]): Promise<void> {
    const client = new LongPollClient(edge);
    const query =
      initial === null
        ? ''
        : `?subscriptions=${encodeURIComponent(JSON.stringify(initial.map((eventType) => ({ eventType }))))}`;
    assert.equal((await client.get(query)).status, 200);
    const polls = poller(client);
    polls.start();
    await polls.settle();
    const created = polls.received.find((e) => e.type === 'gw.connection.create');
    assert.ok(created, 'the first poll brings gw.connection.create');
    const token = (created.data as { connection_token: string }).connection_token;

    const sets: string[][] = [initial ?? []];
    const published: Array<{ n: number; type: string; setIndex: number }> = [];
    for (const a of actions) {
      if (a.kind === 'put') {
        await put(token, a.types);
        sets.push(a.types);
      } else if (a.kind === 'publish') {
        published.push({ n: published.length, type: a.type, setIndex: sets.length - 1 });
        await publish(a.type, published.length - 1);
      } else if (a.kind === 'poll') polls.start();
      else if (a.kind === 'await') await polls.settle();
      else await new Promise((r) => setTimeout(r, a.ms));
    }
    // The end marker: the last set plus its type, so what the last set decides stays decided.
    await polls.settle();
    const last = [...sets.at(-1)!, 'end'];
    await put(token, last);
    sets.push(last);
    await publish('end', -1);
    for (let i = 0; i < 40 && !polls.received.some((e) => e.type === 'end'); i++) {
      polls.start();
      await polls.settle();
    }
    assert.ok(
      polls.received.some((e) => e.type === 'end'),
      'the end marker arrived within 40 polls',
    );

    const got = polls.received.filter((e) => TYPES.includes(e.type)).map((e) => (e.data as { n: number }).n);
    assert.equal(new Set(got).size, got.length, `no event twice: ${got.join(',')}`);
    assert.deepEqual(
      got,
      [...got].sort((x, y) => x - y),
      'events in publish order',
    );
    for (const e of published) {
      const inForce = sets.slice(e.setIndex);
      if (inForce.every((s) => s.includes(e.type)))
        assert.ok(got.includes(e.n), `event ${e.n} (${e.type}) skipped; delivered: ${got.join(',')}`);
      if (inForce.every((s) => !s.includes(e.type)))
        assert.ok(!got.includes(e.n), `event ${e.n} (${e.type}) delivered while not subscribed`);
    }
    const seen = polls.received
      .filter((e) => e.type === 'gw.subscriptions_set')
      .map((e) => (e.data as Array<{ eventType: string }>).map((s) => s.eventType).join(','));
    const made = sets.map((set) => set.join(','));
    let next = 0;
    const inOrder = seen.every((set) => {
      next = made.indexOf(set, next) + 1;
      return next > 0;
    });
    assert.ok(
      inOrder && seen.at(-1) === made.at(-1),
      `changes seen ${seen.join(' | ')}, made ${made.join(' | ')}`,
    );
  }

  it('never skips an event whatever the interleaving of PUTs, polls and publishes', async () => {
    console.log(`# long-poll property: seed ${seed}, ${runs} runs`);
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(
        fc.option(typeSet, { nil: null }),
        fc.array(action, { minLength: 1, maxLength: 30 }),
        run,
      ),
      { numRuns: runs, seed, endOnFailure: true },
    );
    console.log(`# long-poll property: ${runs} runs in ${Math.round(performance.now() - started)} ms`);
  });
});
