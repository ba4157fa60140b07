/** JSON to the REST engine, a flow's dynamic fork, and events to the publisher. */
import { type CorpusCase, chunk, clientErrors, head, withLength } from './corpus-case.ts';

const json = { 'content-type': 'application/json' };
const cloudEvent = { 'content-type': 'application/cloudevents+json' };
const ackHeaders = { ...json, authorization: 'Bearer not-a-verified-jwt' };

function post(
  path: string,
  headers: Record<string, string>,
  text: string,
): Omit<CorpusCase & { kind: 'http' }, 'name'> {
  const body = Buffer.from(text);
  return {
    kind: 'http',
    via: 'edge',
    head: withLength(`POST ${path} HTTP/1.1`, headers, body),
    body,
    statuses: clientErrors,
  };
}

function event(data: unknown): string {
  return JSON.stringify({ specversion: '1.0', id: 'c1', source: 'corpus', type: 'corpus.case', data });
}

const wideData = Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, i]));

export const jsonCases: CorpusCase[] = [
  {
    name: 'REST: 100,000 levels deep, closed',
    ...post('/api/echo/1', json, `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  },
  { name: 'REST: larger than the body limit', ...post('/api/echo/1', json, `[${'1,'.repeat(600_000)}1]`) },
  // 1.2 s of event loop and +156 MB before the fork width was bounded.
  {
    name: 'flow: dynamic fork over 300,000 items',
    ...post('/api/flow/dynamic-fork', json, JSON.stringify({ items: Array(300_000).fill(1) })),
  },
  {
    name: 'flow: dynamic fork over 5,000 items (within the key bound, past the fork width)',
    ...post('/api/flow/dynamic-fork', json, JSON.stringify({ items: Array(5_000).fill(1) })),
  },
  {
    name: 'REST: 50,000 keys in 450 KB, within the body limit',
    ...post(
      '/api/echo/1',
      json,
      JSON.stringify(Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [i.toString(36), 0]))),
    ),
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'REST: a JSON body that never ends, chunked',
    head: head('POST /api/echo/1 HTTP/1.1', { ...json, 'transfer-encoding': 'chunked' }),
    body: chunk('['),
    endless: chunk('1,'.repeat(32 * 1024)),
    statuses: clientErrors,
  },
  {
    name: 'event: 100,000 levels deep',
    ...post('/_gw/v1/events', cloudEvent, `{"specversion":"1.0","data":${'['.repeat(100_000)}`),
  },
  {
    name: 'event: nested 10,000 levels inside valid JSON',
    ...post(
      '/_gw/v1/events',
      cloudEvent,
      event(0).replace('"data":0', `"data":${'['.repeat(10_000)}${']'.repeat(10_000)}`),
    ),
  },
  // Blocked the publisher 0.2-0.5 s per post before MAX_EVENT_KEYS.
  { name: 'event: 90,000 keys in 1 MiB', ...post('/_gw/v1/events', cloudEvent, event(wideData)) },
  {
    name: 'event: 150,000 array items',
    ...post('/_gw/v1/events', cloudEvent, event(Array(150_000).fill(0))),
  },
  { name: 'event: truncated', ...post('/_gw/v1/events', cloudEvent, event({ a: 1 }).slice(0, 40)) },
  {
    name: 'event: batch mode',
    ...post('/_gw/v1/events', { 'content-type': 'application/cloudevents-batch+json' }, `[${event(1)}]`),
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'event: a body that never ends, chunked',
    head: head('POST /_gw/v1/events HTTP/1.1', { ...cloudEvent, 'transfer-encoding': 'chunked' }),
    body: chunk('{"data":['),
    endless: chunk('0,'.repeat(32 * 1024)),
    statuses: clientErrors,
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'subscriptions: a long-poll subscription body that never ends, chunked',
    head: head('PUT /_gw/v1/connection/longpolling/not-a-token/subscriptions HTTP/1.1', {
      ...json,
      'transfer-encoding': 'chunked',
    }),
    body: chunk('{"subscriptions":['),
    endless: chunk('{"eventType":"x"},'.repeat(2048)),
    statuses: clientErrors,
  },
  // The acknowledgement's body is read before the JWT is verified: any Bearer text reaches it.
  { name: 'ack: truncated', ...post('/_gw/v1/ack', ackHeaders, '{"session":"inbox","posi'), statuses: [400] },
  {
    name: 'ack: 500 levels deep, within ACK_MAX_BODY_BYTES',
    ...post('/_gw/v1/ack', ackHeaders, `${'['.repeat(500)}${']'.repeat(500)}`),
    statuses: [400],
  },
  {
    name: 'ack: the fields under __proto__',
    ...post('/_gw/v1/ack', ackHeaders, '{"__proto__":{"session":"inbox","position":"1"}}'),
    statuses: [400],
  },
  {
    name: "ack: the body's token a JSON object, in text/plain",
    ...post(
      '/_gw/v1/ack',
      { 'content-type': 'text/plain' },
      '{"session":"inbox","position":"1","token":{"alg":"none"}}',
    ),
    statuses: [400],
  },
  {
    name: "ack: the body's token under __proto__, in text/plain",
    ...post(
      '/_gw/v1/ack',
      { 'content-type': 'text/plain' },
      '{"session":"inbox","position":"1","__proto__":{"token":"x"}}',
    ),
    statuses: [401],
  },
  {
    name: 'ack: a token in the body and in Authorization',
    ...post('/_gw/v1/ack', ackHeaders, '{"session":"inbox","position":"1","token":"not-a-verified-jwt"}'),
    statuses: [400],
  },
  {
    name: 'ack: larger than ACK_MAX_BODY_BYTES',
    ...post('/_gw/v1/ack', ackHeaders, JSON.stringify({ session: 'inbox', position: '1'.repeat(2000) })),
    statuses: [413],
  },
  {
    kind: 'http',
    via: 'edge',
    name: 'ack: a body that never ends, chunked',
    head: head('POST /_gw/v1/ack HTTP/1.1', { ...ackHeaders, 'transfer-encoding': 'chunked' }),
    body: chunk('{"session":"'),
    endless: chunk('x'.repeat(32 * 1024)),
    statuses: [413],
  },
];
