import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { AsyncHttpRequest } from '../src/index.ts';

const request = () =>
  new AsyncHttpRequest({
    method: 'POST',
    url: '/api/Orders/42',
    ip: '127.0.0.1',
    https: false,
    headers: { 'content-type': 'application/json', 'x-user': 'ann' },
    cookies: { SessionId: 'abc' },
    session: { user: 'ann' },
    pathParameters: { orderId: '42' },
    queryParameters: { Tag: ['a', 'b'], single: 'x' },
    queryString: 'Tag=a&Tag=b&single=x',
    body: { name: 'pen', qty: 2 },
    contentLength: 23,
    timeoutSeconds: 30,
  });

describe('AsyncHttpRequest', () => {
  it('looks headers, cookies, parameters and session keys up ignoring case', () => {
    const req = request();
    assert.equal(req.getHeader('X-User'), 'ann');
    assert.equal(req.getCookie('sessionid'), 'abc');
    assert.equal(req.getPathParameter('ORDERID'), '42');
    assert.equal(req.getSessionInfo('USER'), 'ann');
    assert.equal(req.getQueryParameter('tag'), 'a');
    assert.equal(req.getHeader('missing'), undefined);
  });

  it('finds only what the request sent, never an inherited member', () => {
    const req = request();
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(req.getQueryParameter(name), undefined, name);
      assert.deepEqual(req.getQueryParameters(name), [], name);
      assert.equal(req.getHeader(name), undefined, name);
      assert.equal(req.getCookie(name), undefined, name);
    }
    const empty = new AsyncHttpRequest({ method: 'GET', url: '/', ip: '', https: false, headers: {} });
    assert.equal(empty.getQueryParameter('constructor'), undefined);
  });

  it('gives every value of a repeated query key and a list for a single one', () => {
    const req = request();
    assert.deepEqual(req.getQueryParameters('tag'), ['a', 'b']);
    assert.deepEqual(req.getQueryParameters('single'), ['x']);
    assert.deepEqual(req.getQueryParameters('none'), []);
    assert.deepEqual(req.getQueryParameters(), { Tag: ['a', 'b'], single: 'x' });
    assert.equal(req.getQueryString(), 'Tag=a&Tag=b&single=x');
  });

  it('answers the basic accessors', () => {
    const req = request();
    assert.equal(req.getMethod(), 'POST');
    assert.equal(req.getUrl(), '/api/Orders/42');
    assert.equal(req.getRemoteIp(), '127.0.0.1');
    assert.equal(req.getContentLength(), 23);
    assert.equal(req.isHttps(), false);
    assert.equal(req.getTimeoutSeconds(), 30);
    assert.deepEqual(req.getSessionInfo(), { user: 'ann' });
  });

  it('turns a JSON object body into an instance of a class', () => {
    class Order {
      name = '';
      qty = 0;
      total() {
        return this.qty * 2;
      }
    }
    const order = request().getBody(Order);
    assert.ok(order instanceof Order);
    assert.equal(order.total(), 4);
    const text = new AsyncHttpRequest({
      method: 'POST',
      url: '/',
      ip: '',
      https: false,
      headers: {},
      body: 'x',
    });
    assert.throws(() => text.getBody(Order), /not a JSON object/);
  });

  it('describes uploaded files and the body stream', () => {
    const stream = Readable.from([Buffer.from('abc')]);
    const req = new AsyncHttpRequest({
      method: 'POST',
      url: '/upload',
      ip: '',
      https: false,
      headers: {},
      stream,
      streamRoute: 'stream.1',
      files: [
        { fieldName: 'f', fileName: 'a.txt', contentType: 'text/plain', size: 3, data: Buffer.from('abc') },
        {
          fieldName: 'f',
          fileName: 'b.bin',
          contentType: 'application/octet-stream',
          size: 1,
          data: Buffer.from('z'),
        },
      ],
    });
    assert.equal(req.getFileName(), 'a.txt');
    assert.deepEqual(req.getFileNames(), ['a.txt', 'b.bin']);
    assert.deepEqual(req.getFileContentTypes(), ['text/plain', 'application/octet-stream']);
    assert.deepEqual(req.getFileSizes(), [3, 1]);
    assert.equal(req.getStream(), stream);
    assert.equal(req.getStreamRoute(), 'stream.1');
  });

  it('defaults the url to / and empty maps when parts are absent', () => {
    const req = new AsyncHttpRequest({ method: 'GET', url: '', ip: '', https: false, headers: {} });
    assert.equal(req.getUrl(), '/');
    assert.deepEqual(req.getCookies(), {});
    assert.deepEqual(req.getPathParameters(), {});
    assert.deepEqual(req.getFiles(), []);
    assert.equal(req.getFileName(), undefined);
  });
});
