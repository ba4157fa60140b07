import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type CloudEvent,
  fromJsonValue,
  InvalidCloudEventError,
  jsonEventContentType,
  parseJsonEvent,
  serializeJsonEvent,
} from '../src/index.ts';

describe('JSON event format', () => {
  it('parses an event and keeps unknown members', () => {
    const text =
      '{"specversion":"0.2","type":"chatroom_message","id":"first-event","source":"tutorial","custom":[1]}';
    assert.deepEqual(parseJsonEvent(Buffer.from(text)), JSON.parse(text));
  });

  it('reports a body that is not JSON', () => {
    assert.throws(
      () => parseJsonEvent('{"specversion":'),
      (err: unknown) => {
        assert.ok(err instanceof InvalidCloudEventError);
        assert.deepEqual(
          err.problems.map((p) => [p.attribute, p.rule]),
          [['body', 'json']],
        );
        assert.match(err.message, /the body is not valid JSON/);
        return true;
      },
    );
  });

  it('reports every problem of a JSON value that is not a valid event', () => {
    assert.throws(() => parseJsonEvent('[]'), /a CloudEvent must be a JSON object, got an array/);
    assert.throws(
      () => parseJsonEvent('{"specversion":"1.0","id":"1"}'),
      /'type' is required; 'source' is required/,
    );
  });

  it('drops attributes set to null but keeps null data', () => {
    const event = fromJsonValue({
      specversion: '1.0',
      id: '1',
      type: 't',
      source: 's',
      subject: null,
      data: null,
    });
    assert.deepEqual(event, { specversion: '1.0', id: '1', type: 't', source: 's', data: null });
  });

  it('serialises to text that parses back to the same event', () => {
    const event: CloudEvent = {
      specversion: '1.0',
      id: '1',
      type: 't',
      source: 's',
      time: '2024-05-01T12:00:00Z',
      gw: { correlation: 'c', headers: { a: 'b' } },
      data: { nested: [1, 'two', null] },
    };
    assert.deepEqual(parseJsonEvent(serializeJsonEvent(event)), event);
    assert.equal(jsonEventContentType, 'application/cloudevents+json; charset=utf-8');
  });

  it('serialises bytes in data as base64, per version', () => {
    const data = Buffer.from('hi');
    const v1: CloudEvent = { specversion: '1.0', id: '1', type: 't', source: 's', data };
    const v02: CloudEvent = { specversion: '0.2', id: '1', type: 't', source: 's', data };
    const { data: _bytes, ...attributes } = v1;
    assert.deepEqual(JSON.parse(serializeJsonEvent(v1)), { ...attributes, data_base64: 'aGk=' });
    assert.equal(JSON.parse(serializeJsonEvent(v02)).data, 'aGk=');
  });
});
