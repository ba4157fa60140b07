import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createEvent,
  defaultEventSource,
  eventFactory,
  InvalidCloudEventError,
  isRfc3339Timestamp,
  validateCloudEvent,
} from '../src/index.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createEvent', () => {
  it('creates a valid 0.2 event with a UUID id, the current time and the default source', () => {
    const before = Date.now();
    const event = createEvent({ type: 'gw.connection.create', data: { connection_token: 'tok' } });
    assert.equal(event.specversion, '0.2');
    assert.equal(event.type, 'gw.connection.create');
    assert.equal(event.source, defaultEventSource);
    assert.match(event.id, uuid);
    assert.ok(isRfc3339Timestamp(event.time!));
    assert.ok(Date.parse(event.time!) >= before && Date.parse(event.time!) <= Date.now());
    assert.deepEqual(event.data, { connection_token: 'tok' });
    assert.deepEqual(validateCloudEvent(event), []);
  });

  it('gives every event its own id', () => {
    const ids = new Set(Array.from({ length: 100 }, () => createEvent({ type: 't' }).id));
    assert.equal(ids.size, 100);
  });

  it('leaves data out when there is none', () => {
    const event = createEvent({ type: 'gw.session_killed' });
    assert.equal('data' in event, false);
    assert.equal('contenttype' in event, false);
  });

  it('writes the content type under the attribute name of the version', () => {
    const v02 = createEvent({ type: 't', data: 'hi', contentType: 'text/plain' });
    const v1 = createEvent({ type: 't', data: 'hi', contentType: 'text/plain', specversion: '1.0' });
    assert.equal(v02.contenttype, 'text/plain');
    assert.equal(v1.datacontenttype, 'text/plain');
    assert.equal('datacontenttype' in v02, false);
    assert.equal('contenttype' in v1, false);
  });

  it('takes id, time, source, gw and extensions from the caller', () => {
    const event = createEvent({
      type: 't',
      id: 'fixed',
      time: new Date('2024-05-01T12:00:00Z'),
      source: '/publisher',
      specversion: '1.0',
      gw: { correlation: 'c-1' },
      extensions: {
        subject: 'alice',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
    });
    assert.deepEqual(event, {
      specversion: '1.0',
      type: 't',
      source: '/publisher',
      id: 'fixed',
      time: '2024-05-01T12:00:00.000Z',
      subject: 'alice',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      gw: { correlation: 'c-1' },
    });
  });

  it('refuses to create an invalid event', () => {
    assert.throws(() => createEvent({ type: '' }), InvalidCloudEventError);
    assert.throws(() => createEvent({ type: 't', time: 'soon' }), /'time' must be an RFC 3339 timestamp/);
    assert.throws(() => createEvent({ type: 't', specversion: '1.0', extensions: { Bad: 1 } }), /"Bad"/);
  });
});

describe('eventFactory', () => {
  it('fills in the service’s source and spec version, which a call can still override', () => {
    const create = eventFactory({ source: 'push-hub', specversion: '1.0' });
    const event = create({ type: 'gw.subscriptions_set', data: [] });
    assert.equal(event.source, 'push-hub');
    assert.equal(event.specversion, '1.0');
    assert.equal(create({ type: 't', source: 'other' }).source, 'other');
    assert.equal(create({ type: 't', specversion: '0.2' }).specversion, '0.2');
    assert.equal(eventFactory({ source: 'hub' })({ type: 't' }).specversion, '0.2');
  });
});
