import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  batchModeNotSupported,
  type CloudEvent,
  type HttpEventMessage,
  httpMode,
  InvalidCloudEventError,
  parseHttpEvent,
  percentDecode,
  percentEncode,
  toBinaryHttp,
  toStructuredHttp,
  UnsupportedCloudEventError,
} from '../src/index.ts';

const event02: CloudEvent = {
  specversion: '0.2',
  type: 'greeting',
  id: 'e-1',
  source: 'tutorial',
  data: { name: 'alice' },
};
const body = (value: unknown) => Buffer.from(JSON.stringify(value));

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InvalidCloudEventError, `expected InvalidCloudEventError, got ${String(err)}`);
    return err.problems.map((p) => `${p.attribute} ${p.rule}`);
  }
  assert.fail('expected InvalidCloudEventError');
}

describe('HTTP binding: reading', () => {
  it('reads structured mode and ignores ce- headers there', () => {
    const event = parseHttpEvent({
      headers: { 'Content-Type': 'application/cloudevents+json; charset=utf-8', 'ce-type': 'ignored' },
      body: body(event02),
    });
    assert.deepEqual(event, event02);
  });

  it('falls back to structured mode for application/json without ce-specversion', () => {
    assert.equal(httpMode({ 'content-type': 'application/json' }), 'structured');
    assert.deepEqual(
      parseHttpEvent({ headers: { 'content-type': 'application/json' }, body: body(event02) }),
      event02,
    );
  });

  it('reads binary mode for application/json with ce-specversion, JSON-parsing the data', () => {
    const headers = {
      'content-type': 'application/json',
      'ce-specversion': '0.2',
      'ce-type': 'greeting',
      'ce-id': 'e-1',
      'ce-source': 'tutorial',
    };
    assert.equal(httpMode(headers), 'binary');
    assert.deepEqual(parseHttpEvent({ headers, body: body({ name: 'alice' }) }), {
      ...event02,
      contenttype: 'application/json',
    });
  });

  it('matches ce- header names in any case', () => {
    const event = parseHttpEvent({
      headers: {
        'Content-Type': 'text/plain',
        'CE-SpecVersion': '1.0',
        'Ce-Type': 'greeting',
        'cE-iD': 'e-2',
        'CE-SOURCE': '/x',
        'Ce-Subject': 'alice',
      },
      body: Buffer.from('hello'),
    });
    assert.deepEqual(event, {
      specversion: '1.0',
      type: 'greeting',
      id: 'e-2',
      source: '/x',
      subject: 'alice',
      datacontenttype: 'text/plain',
      data: 'hello',
    });
  });

  it('keeps any other content type as the data content type, with bytes in data_base64 (1.0)', () => {
    const event = parseHttpEvent({
      headers: {
        'content-type': 'image/png',
        'ce-specversion': '1.0',
        'ce-type': 't',
        'ce-id': '1',
        'ce-source': 's',
      },
      body: Buffer.from([137, 80, 78, 71]),
    });
    assert.equal(event.datacontenttype, 'image/png');
    assert.equal(event['data_base64'], 'iVBORw==');
    assert.equal('data' in event, false);
  });

  it('reads the gw extension from a JSON ce-gw header and other extensions as strings', () => {
    const event = parseHttpEvent({
      headers: {
        'ce-specversion': '0.2',
        'ce-type': 't',
        'ce-id': '1',
        'ce-source': 's',
        'ce-gw': '{"target_partition":"user-7"}',
        'ce-retries': '3',
      },
      body: Buffer.alloc(0),
    });
    assert.deepEqual(event.gw, { target_partition: 'user-7' });
    assert.equal(event['retries'], '3');
  });

  it('reports a ce-gw header that is not JSON', () => {
    const headers = { 'ce-specversion': '0.2', 'ce-type': 't', 'ce-id': '1', 'ce-source': 's', 'ce-gw': '{' };
    assert.deepEqual(
      problemsOf(() => parseHttpEvent({ headers, body: Buffer.alloc(0) })),
      ['gw json'],
    );
  });

  it('percent-decodes 1.0 header values but not 0.2 ones', () => {
    const headers = { 'ce-type': 't', 'ce-id': '1', 'ce-source': 's', 'ce-subject': 'caf%C3%A9%20%22x%22' };
    const v1 = parseHttpEvent({ headers: { ...headers, 'ce-specversion': '1.0' }, body: Buffer.alloc(0) });
    const v02 = parseHttpEvent({ headers: { ...headers, 'ce-specversion': '0.2' }, body: Buffer.alloc(0) });
    assert.equal(v1['subject'], 'café "x"');
    assert.equal(v02['subject'], 'caf%C3%A9%20%22x%22');
  });

  it('refuses a percent-encoded CR/LF in a binary-mode attribute', () => {
    const headers = {
      'ce-specversion': '1.0',
      'ce-type': 'greeting%0D%0Aevent:%20forged',
      'ce-id': '1',
      'ce-source': 's',
    };
    assert.deepEqual(
      problemsOf(() => parseHttpEvent({ headers, body: Buffer.alloc(0) })),
      ['type character'],
    );
  });

  it('asks for ce-specversion or structured mode when neither is there', () => {
    for (const headers of [{}, { 'content-type': 'text/plain', 'ce-type': 't' }]) {
      assert.throws(
        () => parseHttpEvent({ headers, body: Buffer.from('x') }),
        (err: unknown) => {
          assert.ok(err instanceof InvalidCloudEventError);
          assert.equal(err.problems[0]!.attribute, 'specversion');
          assert.match(err.message, /application\/cloudevents\+json \(structured mode\)/);
          assert.match(err.message, /ce-specversion header \(binary mode\)/);
          return true;
        },
      );
    }
  });

  it('reports every problem of a binary-mode event, attributes and data together', () => {
    const headers = {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': '',
      'ce-source': 's',
    };
    assert.deepEqual(
      problemsOf(() => parseHttpEvent({ headers, body: Buffer.from('{not json') })),
      ['data json', 'id empty', 'type required'],
    );
  });

  it('names the supported versions for an unsupported ce-specversion', () => {
    const headers = { 'ce-specversion': '0.3', 'ce-type': 't', 'ce-id': '1', 'ce-source': 's' };
    assert.throws(
      () => parseHttpEvent({ headers, body: Buffer.alloc(0) }),
      /supported versions are 0\.2, 1\.0/,
    );
  });

  it('reports structured-mode problems with the body', () => {
    const headers = { 'content-type': 'application/cloudevents+json' };
    assert.deepEqual(
      problemsOf(() => parseHttpEvent({ headers, body: Buffer.from('nope') })),
      ['body json'],
    );
    assert.deepEqual(
      problemsOf(() => parseHttpEvent({ headers, body: body({ specversion: '0.2', type: 't' }) })),
      ['id required', 'source required'],
    );
  });

  it('answers batch mode as unsupported', () => {
    const headers = { 'Content-Type': 'application/cloudevents-batch+json' };
    assert.equal(httpMode(headers), 'batch');
    assert.throws(
      () => parseHttpEvent({ headers, body: body([event02]) }),
      (err: unknown) => {
        assert.ok(err instanceof UnsupportedCloudEventError);
        assert.equal(err.reason, 'batch-mode');
        assert.equal(err.message, batchModeNotSupported);
        return true;
      },
    );
  });

  it('answers other structured formats as unsupported', () => {
    assert.throws(
      () =>
        parseHttpEvent({
          headers: { 'content-type': 'application/cloudevents+xml' },
          body: Buffer.from('<e/>'),
        }),
      (err: unknown) =>
        err instanceof UnsupportedCloudEventError &&
        err.reason === 'event-format' &&
        err.message ===
          `The CloudEvents event format 'xml' is not supported; use application/cloudevents+json.`,
    );
  });
});

describe('HTTP binding: writing', () => {
  const event1: CloudEvent = {
    specversion: '1.0',
    type: 'order.created',
    id: 'o-1',
    source: '/shop',
    time: '2024-05-01T12:00:00Z',
    subject: 'café "order" 100%',
    datacontenttype: 'application/json',
    gw: { correlation: 'c-1', target_partition: 'user-7' },
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    data: { total: 12.5 },
  };

  it('writes structured mode', () => {
    const message = toStructuredHttp(event1);
    assert.deepEqual(message.headers, { 'content-type': 'application/cloudevents+json; charset=utf-8' });
    assert.deepEqual(JSON.parse(message.body.toString()), event1);
  });

  it('writes binary mode with ce- headers, percent-encoding 1.0 values', () => {
    const message = toBinaryHttp(event1);
    assert.deepEqual(message.headers, {
      'ce-specversion': '1.0',
      'ce-type': 'order.created',
      'ce-id': 'o-1',
      'ce-source': '/shop',
      'ce-time': '2024-05-01T12:00:00Z',
      'ce-subject': 'caf%C3%A9%20%22order%22%20100%25',
      'ce-gw': '{%22correlation%22:%22c-1%22,%22target_partition%22:%22user-7%22}',
      'ce-traceparent': '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'content-type': 'application/json',
    });
    assert.equal(message.body.toString(), '{"total":12.5}');
  });

  it('writes 0.2 binary values as they are and non-string extensions as text', () => {
    const message = toBinaryHttp({
      specversion: '0.2',
      type: 't',
      id: '1',
      source: 's',
      contenttype: 'text/plain',
      gw: { correlation: 'c' },
      retries: 3,
      data: 'hi there',
    });
    assert.equal(message.headers['ce-gw'], '{"correlation":"c"}');
    assert.equal(message.headers['ce-retries'], '3');
    assert.equal(message.headers['content-type'], 'text/plain');
    assert.equal(message.headers['ce-contenttype'], undefined);
    assert.equal(message.body.toString(), 'hi there');
  });

  it('writes application/json for an event without a content type', () => {
    const message = toBinaryHttp({ specversion: '0.2', type: 't', id: '1', source: 's', data: [1] });
    assert.equal(message.headers['content-type'], 'application/json');
    assert.equal(message.body.toString(), '[1]');
    assert.equal(parseHttpEvent(message).contenttype, 'application/json');
  });

  it('round-trips both modes and both versions', () => {
    const events: CloudEvent[] = [
      event1,
      { ...event02, contenttype: 'application/json', gw: { remoteIp: '::1', headers: { a: 'b' } } },
      { specversion: '0.2', type: 't', id: '2', source: 's', contenttype: 'image/png', data: 'iVBORw==' },
      {
        specversion: '1.0',
        type: 't',
        id: '3',
        source: 's',
        datacontenttype: 'image/png',
        data_base64: 'iVBORw==',
      },
      {
        specversion: '1.0',
        type: 't',
        id: '4',
        source: 's',
        datacontenttype: 'text/plain',
        data: 'ünïcode ✓',
      },
      { specversion: '1.0', type: 't', id: '5', source: 's', datacontenttype: 'application/json' },
    ];
    for (const event of events) {
      assert.deepEqual(parseHttpEvent(toStructuredHttp(event)), event, `structured ${event.id}`);
      assert.deepEqual(parseHttpEvent(toBinaryHttp(event)), event, `binary ${event.id}`);
    }
  });

  it('sends binary mode through a real HTTP server, non-ASCII attributes included', async () => {
    let received: CloudEvent | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received = parseHttpEvent({ headers: req.headers, body: Buffer.concat(chunks) });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await post(port, toBinaryHttp(event1));
    server.close();
    assert.deepEqual(received, event1);
  });
});

describe('percent encoding', () => {
  it('encodes exactly space, double quote, percent and non-printable or non-ASCII characters', () => {
    assert.equal(percentEncode("a-z_0~!#$&'()*+,/:;<=>?@[\\]^`{|}"), "a-z_0~!#$&'()*+,/:;<=>?@[\\]^`{|}");
    assert.equal(percentEncode(' "%\té€'), '%20%22%25%09%C3%A9%E2%82%AC');
    assert.equal(percentDecode(percentEncode('mixed "text" ✓ 100%')), 'mixed "text" ✓ 100%');
    assert.equal(percentDecode('100%'), '100%', 'a malformed escape is kept');
  });
});

function post(port: number, message: HttpEventMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({
      port,
      host: '127.0.0.1',
      method: 'POST',
      path: '/_gw/v1/events',
      headers: message.headers,
    });
    req.on('response', (res) => res.resume().on('end', resolve));
    req.on('error', reject);
    req.end(message.body);
  });
}
