/**
 * Correlated responses to the proxy's `/vN/responses` on the internal API, each for a request that
 * waits at the edge right now (waiting-requests.ts). `/v1` and `/v2` take a CloudEvent (structured,
 * or binary mode with `ce-` headers; JSON content types only, 415 before the body is read
 * otherwise); `/v3` a binary response (`gw-correlation`, `gw-response-code`, the body as it is) or,
 * with `content-type: application/cloudevents+json`, a structured CloudEvent as on `/v1`. Every
 * body is read with PROXY_MAX_EVENT_BYTES (1 MiB by default) as its limit: 413 beyond.
 */
import { type CorpusCase, chunk, head, lastChunk, type ResponseCase, withLength } from './corpus-case.ts';

const limit = 1024 * 1024;
const structured = { 'content-type': 'application/cloudevents+json' };
const badRequest = [400];

type Request = ReturnType<ResponseCase['build']>;

function post(path: string, headers: Record<string, string>, text: string | Buffer): Request {
  const body = Buffer.from(text);
  return { head: withLength(`POST ${path} HTTP/1.1`, headers, body), body };
}

/** A response event for `correlation`: a valid one unless `change` breaks it. */
function event(correlation: string, change: (e: Record<string, unknown>) => void = () => {}): string {
  const e: Record<string, unknown> = {
    specversion: '1.0',
    id: 'r1',
    source: 'corpus',
    type: 'corpus.response',
    datacontenttype: 'application/json',
    data: { ok: true },
    gw: { correlation, responseCode: 201 },
  };
  change(e);
  return JSON.stringify(e);
}

/** The gw extension of an event being changed. */
const gw = (e: Record<string, unknown>) => e['gw'] as Record<string, unknown>;

/** Structured-mode CloudEvents that are broken, each refused (400) by every endpoint taking one. */
const brokenEvents: Array<[string, (correlation: string) => string]> = [
  ['truncated JSON', (c) => event(c).slice(0, 60)],
  ['not JSON', () => '<response status="201"/>'],
  ['a JSON array', (c) => `[${event(c)}]`],
  ['a JSON string', (c) => JSON.stringify(event(c))],
  ['null', () => 'null'],
  ['an empty body', () => ''],
  ...(['id', 'source', 'type', 'specversion'] as const).map((name): [string, (c: string) => string] => [
    `without ${name}`,
    (c) =>
      event(c, (e) => {
        delete e[name];
      }),
  ]),
  [
    'id a number',
    (c) =>
      event(c, (e) => {
        e['id'] = 1;
      }),
  ],
  [
    'specversion a number',
    (c) =>
      event(c, (e) => {
        e['specversion'] = 1.0;
      }),
  ],
  [
    'specversion 2.0',
    (c) =>
      event(c, (e) => {
        e['specversion'] = '2.0';
      }),
  ],
  [
    'source an object',
    (c) =>
      event(c, (e) => {
        e['source'] = { uri: 'corpus' };
      }),
  ],
  [
    'an empty type',
    (c) =>
      event(c, (e) => {
        e['type'] = '';
      }),
  ],
  [
    'a line break in type',
    (c) =>
      event(c, (e) => {
        e['type'] = 'corpus\r\nresponse';
      }),
  ],
  [
    'data_base64 that is not base64',
    (c) =>
      event(c, (e) => {
        delete e['data'];
        e['data_base64'] = '%%%';
      }),
  ],
  [
    'without gw',
    (c) =>
      event(c, (e) => {
        delete e['gw'];
      }),
  ],
  [
    'gw a string',
    (c) =>
      event(c, (e) => {
        e['gw'] = c;
      }),
  ],
  [
    'gw.correlation a number',
    (c) =>
      event(c, (e) => {
        gw(e)['correlation'] = 42;
      }),
  ],
  [
    'gw.correlation forged',
    (c) =>
      event(c, (e) => {
        gw(e)['correlation'] = 'forged';
      }),
  ],
  [
    'gw.correlation altered',
    (c) =>
      event(c, (e) => {
        gw(e)['correlation'] = altered(c);
      }),
  ],
  ...(['abc', 103, 600, 20.5, '2e2', -201, true, { code: 201 }] as const).map(
    (code): [string, (c: string) => string] => [
      `gw.responseCode ${JSON.stringify(code)}`,
      (c) =>
        event(c, (e) => {
          gw(e)['responseCode'] = code;
        }),
    ],
  ),
  // Past MAX_JSON_DEPTH (128) but well within what JSON.parse takes: refused by the depth check, as
  // a published event is, not delivered to the waiting request.
  [
    'data nested 1,000 levels deep',
    (c) =>
      event(c, (e) => {
        e['data'] = 0;
      }).replace('"data":0', `"data":${'['.repeat(1000)}${']'.repeat(1000)}`),
  ],
  [
    'data nested 100,000 levels deep',
    (c) =>
      event(c, (e) => {
        e['data'] = 0;
      }).replace('"data":0', `"data":${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  ],
];

/** The correlation id with one character changed: no longer authentic. */
function altered(correlation: string): string {
  const at = correlation.length - 2;
  return correlation.slice(0, at) + (correlation[at] === 'A' ? 'B' : 'A') + correlation.slice(at + 1);
}

/** Bodies past the limit: declared, and sent (chunked) without end. */
function oversized(path: string, headers: Record<string, string>, what: string): ResponseCase[] {
  return [
    {
      kind: 'response',
      name: `${path}: ${what} larger than the limit (content-length)`,
      build: (c) => post(path, { ...headers, 'gw-correlation': c }, `${event(c)}${' '.repeat(limit)}`),
      statuses: [413],
    },
    {
      kind: 'response',
      name: `${path}: ${what} that never ends, chunked`,
      build: (c) => ({
        head: head(`POST ${path} HTTP/1.1`, {
          ...headers,
          'gw-correlation': c,
          'transfer-encoding': 'chunked',
        }),
        body: chunk(event(c).slice(0, -1)),
        endless: chunk(`,"x":${JSON.stringify('x'.repeat(32 * 1024))}`),
      }),
      statuses: [413],
    },
  ];
}

/** A valid body sent one byte per chunk: read whole, and delivered. */
function inOneByteChunks(path: string, headers: Record<string, string>, text: (c: string) => string) {
  return (c: string): Request => ({
    head: head(`POST ${path} HTTP/1.1`, { ...headers, 'transfer-encoding': 'chunked' }),
    body: Buffer.concat([...Buffer.from(text(c))].map((byte) => chunk(Buffer.of(byte))).concat(lastChunk)),
  });
}

const deliveredEvent = { status: 201, body: '{"ok":true}' };

/** `/v1/responses` and `/v2/responses`: a CloudEvent, JSON content types only. */
function cloudEventEndpoint(path: string): ResponseCase[] {
  const json = { 'content-type': 'application/json' };
  return [
    ...brokenEvents.map(
      ([name, text]): ResponseCase => ({
        kind: 'response',
        name: `${path}: ${name}`,
        build: (c) => post(path, structured, text(c)),
        statuses: badRequest,
      }),
    ),
    {
      kind: 'response',
      name: `${path}: truncated JSON as application/json`,
      build: (c) => post(path, json, event(c).slice(0, 60)),
      statuses: badRequest,
    },
    ...[
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ].map(
      (type): ResponseCase => ({
        kind: 'response',
        name: `${path}: a valid event sent as ${type}`,
        build: (c) => post(path, { 'content-type': type }, event(c)),
        statuses: [415],
      }),
    ),
    {
      kind: 'response',
      name: `${path}: a valid event without a content type`,
      build: (c) => post(path, {}, event(c)),
      statuses: [415],
    },
    {
      kind: 'response',
      name: `${path}: binary mode without ce-id, ce-source, ce-type`,
      build: (c) =>
        post(path, { ...json, 'ce-specversion': '1.0', 'ce-gw': JSON.stringify({ correlation: c }) }, '{}'),
      statuses: badRequest,
    },
    {
      kind: 'response',
      name: `${path}: batch mode`,
      build: (c) => post(path, { 'content-type': 'application/cloudevents-batch+json' }, `[${event(c)}]`),
      statuses: badRequest,
    },
    {
      kind: 'response',
      name: `${path}: a chunk size that is not hex`,
      build: () => ({
        head: head(`POST ${path} HTTP/1.1`, { ...structured, 'transfer-encoding': 'chunked' }),
        body: Buffer.from('zz\r\n{}\r\n0\r\n\r\n'),
      }),
      statuses: badRequest,
    },
    ...oversized(path, structured, 'an event'),
    {
      kind: 'response',
      name: `${path}: a valid event in 1-byte chunks`,
      build: inOneByteChunks(path, structured, (c) => event(c)),
      statuses: [202],
      delivered: deliveredEvent,
    },
  ];
}

const v3 = '/v3/responses';
const binaryBody = 'a binary response, as it is';

/** `/v3/responses` with `gw-` headers around `body`. */
function binary(headers: (c: string) => Record<string, string>, query = ''): ResponseCase['build'] {
  return (c) => post(`${v3}${query}`, { 'content-type': 'text/plain', ...headers(c) }, binaryBody);
}

const v3Cases: ResponseCase[] = [
  {
    kind: 'response',
    name: `${v3}: without gw-correlation`,
    build: binary(() => ({ 'gw-response-code': '201' })),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: an empty gw-correlation`,
    build: binary(() => ({ 'gw-correlation': '' })),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: a forged gw-correlation`,
    build: binary(() => ({ 'gw-correlation': 'forged' })),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: an altered gw-correlation`,
    build: binary((c) => ({ 'gw-correlation': altered(c) })),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: gw-correlation twice`,
    build: (c) => {
      const body = Buffer.from(binaryBody);
      return {
        head: `${withLength(`POST ${v3} HTTP/1.1`, { 'gw-correlation': c }, body)}\r\ngw-correlation: ${c}`,
        body,
      };
    },
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: a forged correlation in the query`,
    build: binary(() => ({}), '?correlation=forged'),
    statuses: badRequest,
  },
  ...['abc', '99', '103', '600', '2000', '-201', '201.0', '1e3', '0x0c9', '２０１', '201, 201'].map(
    (code): ResponseCase => ({
      kind: 'response',
      name: `${v3}: gw-response-code ${JSON.stringify(code)}`,
      build: binary((c) => ({ 'gw-correlation': c, 'gw-response-code': code })),
      statuses: badRequest,
    }),
  ),
  {
    kind: 'response',
    name: `${v3}: a gw-response-code of 10,000 digits`,
    build: binary((c) => ({ 'gw-correlation': c, 'gw-response-code': '2'.repeat(10_000) })),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3}: a chunk size that is not hex`,
    build: (c) => ({
      head: head(`POST ${v3} HTTP/1.1`, { 'gw-correlation': c, 'transfer-encoding': 'chunked' }),
      body: Buffer.from('zz\r\nhello\r\n0\r\n\r\n'),
    }),
    statuses: badRequest,
  },
  ...oversized(v3, { 'content-type': 'application/octet-stream' }, 'a binary body'),
  {
    kind: 'response',
    name: `${v3}: a binary body in 1-byte chunks`,
    build: (c) =>
      inOneByteChunks(
        v3,
        { 'gw-correlation': c, 'gw-response-code': '201', 'content-type': 'text/plain' },
        () => binaryBody,
      )(c),
    statuses: [202],
    delivered: { status: 201, body: binaryBody },
  },
  // The structured form: application/cloudevents+json makes the body a CloudEvent, as on /v1.
  ...brokenEvents.map(
    ([name, text]): ResponseCase => ({
      kind: 'response',
      name: `${v3} structured: ${name}`,
      // The header would be enough for a binary response: the event's own is what counts here.
      build: (c) => post(v3, { ...structured, 'gw-correlation': c }, text(c)),
      statuses: badRequest,
    }),
  ),
  {
    kind: 'response',
    name: `${v3} structured: without id, with parameters on the media type`,
    build: (c) =>
      post(
        v3,
        { 'content-type': 'Application/CloudEvents+JSON; charset=utf-8', 'gw-correlation': c },
        event(c, (e) => {
          delete e['id'];
        }),
      ),
    statuses: badRequest,
  },
  {
    kind: 'response',
    name: `${v3} structured: a valid event in 1-byte chunks`,
    build: inOneByteChunks(v3, structured, (c) => event(c)),
    statuses: [202],
    delivered: deliveredEvent,
  },
];

export const responseCases: CorpusCase[] = [
  ...cloudEventEndpoint('/v1/responses'),
  ...cloudEventEndpoint('/v2/responses'),
  ...v3Cases,
];
