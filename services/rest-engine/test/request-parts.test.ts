import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventEnvelope } from '@gatehouse/functions';
import { judgeAuthResult, parseAuthSelector, selectAuthRoute } from '../src/endpoints/authentication.ts';
import { parseCookies } from '../src/http/cookies.ts';
import { parseQueryString } from '../src/http/query-string.ts';
import { isW3cTraceId, newCorrelationId, newId, parseTraceparent } from '../src/tracing/trace-context.ts';
import { parseXml, toXml } from '../src/http/xml.ts';

describe('query strings and cookies', () => {
  it('collects repeated keys and decodes + and escapes, into a map without a prototype', () => {
    const map = parseQueryString('a=1&a=2&b=x+y&c=%2F&d&e=%E0%A4%A');
    assert.equal(Object.getPrototypeOf(map), null);
    assert.deepEqual({ ...map }, { a: ['1', '2'], b: 'x y', c: '/', d: '', e: '%E0%A4%A' });
  });

  it('parses cookies and drops invalid ones', () => {
    assert.deepEqual(parseCookies('a=1; b="two"; bad name=3; c=x,y; a=again'), { a: '1', b: 'two' });
    assert.equal(parseCookies(undefined), undefined);
  });
});

describe('authentication', () => {
  it('accepts true or an envelope with body true and passes its headers as session', () => {
    assert.deepEqual(judgeAuthResult(true), { accepted: true, session: undefined });
    assert.deepEqual(judgeAuthResult(new EventEnvelope().setBody(true).setHeader('user', 'demo')), {
      accepted: true,
      session: { user: 'demo' },
    });
    assert.equal(judgeAuthResult(new EventEnvelope().setHeader('user', 'demo')).accepted, true);
  });

  it('rejects false, truthy look-alikes and error envelopes', () => {
    for (const r of [
      false,
      'true',
      1,
      {},
      undefined,
      new EventEnvelope().setBody(false),
      new EventEnvelope().setStatus(403),
    ]) {
      assert.equal(judgeAuthResult(r).accepted, false);
    }
  });

  it('picks the route by header rules, a header-only rule first, else the default', () => {
    const sel = parseAuthSelector([
      'x-app: demo: demo.auth',
      'x-app: any.app.auth',
      'authorization: jwt.auth',
      'default: basic.auth',
    ]);
    assert.ok(typeof sel !== 'string');
    assert.equal(selectAuthRoute(sel, { 'x-app': 'demo' }), 'any.app.auth');
    assert.equal(selectAuthRoute(sel, { authorization: 'Bearer x' }), 'jwt.auth');
    assert.equal(selectAuthRoute(sel, {}), 'basic.auth');
    const byValue = parseAuthSelector(['x-app: demo: demo.auth', 'default: basic.auth']);
    assert.ok(typeof byValue !== 'string');
    assert.equal(selectAuthRoute(byValue, { 'x-app': 'DEMO' }), 'demo.auth');
    assert.equal(selectAuthRoute(byValue, { 'x-app': 'other' }), 'basic.auth');
  });
});

describe('trace context', () => {
  it('accepts only well-formed W3C traceparent headers', () => {
    assert.deepEqual(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'), {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
    });
    assert.equal(parseTraceparent('00-00000000000000000000000000000000-b7ad6b7169203331-01'), undefined);
    assert.equal(parseTraceparent('00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01'), undefined);
    assert.equal(parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01'), undefined);
    assert.equal(parseTraceparent('garbage'), undefined);
  });

  it('makes 32-hex ids', () => {
    assert.ok(isW3cTraceId(newId()));
    assert.notEqual(newId(), newId());
  });
});

describe('XML', () => {
  it('writes and reads XML', () => {
    assert.equal(
      toXml({ b: [1, 2], a: 'x<y', n: null }),
      '<?xml version="1.0" encoding="UTF-8"?>\n<result>\n  <a>x&lt;y</a>\n  <b>1</b>\n  <b>2</b>\n</result>',
    );
    assert.deepEqual(parseXml('<order id="7"><item>pen</item><item>ink</item></order>'), {
      id: '7',
      item: ['pen', 'ink'],
    });
    assert.throws(() => parseXml('<a><b></a>'));
  });
});

describe('correlation ids', () => {
  it('are 32 hex characters and unique', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newCorrelationId()));
    assert.equal(ids.size, 10_000);
    for (const id of [...ids].slice(0, 10)) assert.match(id, /^[0-9a-f]{32}$/);
  });
});
