import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  formatTraceParent,
  isValidParentId,
  isValidTraceId,
  newSpanId,
  newTraceId,
  readTraceContextFromEvent,
  readTraceContextFromHeaders,
  startHop,
  type TraceContext,
  traceContextAttributes,
  withTraceContext,
  writeTraceContextToHeaders,
} from '../src/index.ts';

const traceId = '0af7651916cd43dd8448eb211c80319c';
const parentId = 'b7ad6b7169203331';
const traceparent = `00-${traceId}-${parentId}-01`;
const incoming: TraceContext = {
  traceparent: { version: '00', traceId, parentId, traceFlags: 1 },
  tracestate: [{ key: 'congo', value: 't61rcWkgMzE' }],
};

describe('HTTP headers', () => {
  it('reads traceparent and tracestate under any case of their names', () => {
    for (const [tp, ts] of [
      ['traceparent', 'tracestate'],
      ['TraceParent', 'TraceState'],
      ['TRACEPARENT', 'TRACESTATE'],
    ] as const) {
      assert.deepEqual(
        readTraceContextFromHeaders({ [tp]: traceparent, [ts]: 'congo=t61rcWkgMzE' }),
        incoming,
      );
    }
  });

  it('gives no context without a valid traceparent, and then ignores tracestate', () => {
    assert.equal(readTraceContextFromHeaders({}), undefined);
    assert.equal(readTraceContextFromHeaders({ tracestate: 'foo=1' }), undefined);
    assert.equal(readTraceContextFromHeaders({ traceparent: 'garbage', tracestate: 'foo=1' }), undefined);
    assert.equal(readTraceContextFromHeaders({ 'trace-parent': traceparent }), undefined);
  });

  it('treats a traceparent sent twice as invalid', () => {
    assert.equal(readTraceContextFromHeaders({ traceparent: [traceparent, traceparent] }), undefined);
    assert.equal(readTraceContextFromHeaders({ traceparent, TraceParent: traceparent }), undefined);
  });

  it('combines tracestate sent as several fields', () => {
    const context = readTraceContextFromHeaders({ traceparent, tracestate: ['foo=1', 'bar=2'] });
    assert.deepEqual(context?.tracestate, [
      { key: 'foo', value: '1' },
      { key: 'bar', value: '2' },
    ]);
  });

  it('writes lower-case headers, replacing old ones of any case, and leaves out an empty tracestate', () => {
    const headers: Record<string, string> = { TraceParent: 'old', TRACESTATE: 'old=1', accept: '*/*' };
    const out = writeTraceContextToHeaders(headers, incoming);
    assert.equal(out, headers);
    assert.deepEqual(headers, { accept: '*/*', traceparent, tracestate: 'congo=t61rcWkgMzE' });
    const bare = writeTraceContextToHeaders({ tracestate: 'old=1' }, { ...incoming, tracestate: [] });
    assert.deepEqual(bare, { traceparent });
  });

  it('carries the context through a real HTTP request', async () => {
    let received: TraceContext | undefined;
    const server = createServer((req, res) => {
      received = readTraceContextFromHeaders(req.headers);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const hop = startHop(incoming);
    await new Promise<void>((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', headers: writeTraceContextToHeaders({}, hop) });
      req.on('response', (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      req.end();
    });
    server.close();
    assert.deepEqual(received, hop);
  });
});

describe('CloudEvent attributes', () => {
  const event = { specversion: '1.0', id: '1', type: 't', source: 's' };

  it('writes traceparent and tracestate as top-level attributes on a copy', () => {
    const traced = withTraceContext(event, incoming);
    assert.deepEqual(traced, { ...event, traceparent, tracestate: 'congo=t61rcWkgMzE' });
    assert.equal('traceparent' in event, false);
  });

  it('drops an old tracestate when the new context has none', () => {
    const traced = withTraceContext({ ...event, tracestate: 'old=1' }, { ...incoming, tracestate: [] });
    assert.deepEqual(traced, { ...event, traceparent });
  });

  it('reads the context back', () => {
    assert.deepEqual(readTraceContextFromEvent(withTraceContext(event, incoming)), incoming);
    assert.equal(readTraceContextFromEvent(event), undefined);
    assert.equal(readTraceContextFromEvent({ ...event, traceparent: 42 }), undefined);
    assert.equal(readTraceContextFromEvent({ ...event, traceparent: 'bad', tracestate: 'a=1' }), undefined);
    assert.deepEqual(readTraceContextFromEvent({ ...event, traceparent })?.tracestate, []);
  });

  it('gives the attributes for headers or events', () => {
    assert.deepEqual(traceContextAttributes(incoming), { traceparent, tracestate: 'congo=t61rcWkgMzE' });
  });
});

describe('startHop', () => {
  it('keeps the trace, flags and state with a new span id', () => {
    const hop = startHop(incoming);
    assert.equal(hop.traceparent.traceId, traceId);
    assert.notEqual(hop.traceparent.parentId, parentId);
    assert.ok(isValidParentId(hop.traceparent.parentId));
    assert.equal(hop.traceparent.traceFlags, 1);
    assert.deepEqual(hop.tracestate, incoming.tracestate);
  });

  it('downgrades a higher version to 00', () => {
    const future: TraceContext = { ...incoming, traceparent: { ...incoming.traceparent, version: 'cc' } };
    assert.equal(startHop(future).traceparent.version, '00');
  });

  it('starts a new unsampled trace without a parent, sampled when asked', () => {
    const root = startHop(undefined);
    assert.ok(isValidTraceId(root.traceparent.traceId));
    assert.ok(isValidParentId(root.traceparent.parentId));
    assert.equal(root.traceparent.traceFlags, 0);
    assert.deepEqual(root.tracestate, []);
    assert.equal(startHop(undefined, { sampled: true }).traceparent.traceFlags, 1);
    assert.match(formatTraceParent(root.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  it('makes new random ids every time', () => {
    const traces = new Set(Array.from({ length: 200 }, newTraceId));
    const spans = new Set(Array.from({ length: 200 }, newSpanId));
    assert.equal(traces.size, 200);
    assert.equal(spans.size, 200);
    for (const id of traces) assert.ok(isValidTraceId(id));
    for (const id of spans) assert.ok(isValidParentId(id));
  });
});
