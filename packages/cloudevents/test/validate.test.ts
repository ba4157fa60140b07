import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertCloudEvent,
  type CloudEventProblem,
  InvalidCloudEventError,
  validateCloudEvent,
} from '../src/index.ts';

const v02 = { specversion: '0.2', id: 'e-1', type: 'greeting', source: 'tutorial' };
const v1 = { specversion: '1.0', id: 'e-1', type: 'greeting', source: 'tutorial' };

/** The problems as `attribute rule` pairs, easy to compare. */
function rules(problems: CloudEventProblem[]): string[] {
  return problems.map((p) => `${p.attribute} ${p.rule}`);
}

function only(value: unknown): CloudEventProblem {
  const problems = validateCloudEvent(value);
  assert.equal(problems.length, 1, `one problem expected, got ${JSON.stringify(problems)}`);
  return problems[0]!;
}

describe('validateCloudEvent', () => {
  it('accepts minimal 0.2 and 1.0 events', () => {
    assert.deepEqual(validateCloudEvent(v02), []);
    assert.deepEqual(validateCloudEvent(v1), []);
  });

  it('accepts every optional attribute of 0.2', () => {
    const event = {
      ...v02,
      time: '2018-08-21T09:11:27.614970+00:00',
      schemaurl: 'schemas/greeting.json',
      contenttype: 'application/json; charset=utf-8',
      data: { name: 'alice' },
      gw: { correlation: 'abc', target_partition: 'p1', remoteIp: '127.0.0.1' },
      anyextension: { nested: true },
      Camel_Case: 'not checked in 0.2',
    };
    assert.deepEqual(validateCloudEvent(event), []);
  });

  it('accepts every optional attribute of 1.0', () => {
    const event = {
      ...v1,
      time: '2024-05-01T12:00:00Z',
      dataschema: 'https://example.com/schemas/greeting.json',
      datacontenttype: 'text/plain',
      subject: 'alice',
      data: 'hello',
      gw: { correlation: 'abc' },
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      retries: 3,
      urgent: false,
    };
    assert.deepEqual(validateCloudEvent(event), []);
  });

  it('reports a value that is not an object', () => {
    for (const value of [null, 'text', 42, [v1]]) {
      const p = only(value);
      assert.equal(p.attribute, 'event');
      assert.equal(p.rule, 'type');
      assert.match(p.message, /a CloudEvent must be a JSON object/);
    }
  });

  for (const base of [v02, v1]) {
    describe(`required attributes (${base.specversion})`, () => {
      for (const name of ['specversion', 'id', 'type', 'source']) {
        it(`reports a missing '${name}'`, () => {
          const { [name as keyof typeof base]: _dropped, ...event } = base;
          const p = only(event);
          assert.deepEqual(p, { attribute: name, rule: 'required', message: `'${name}' is required` });
        });

        it(`reports a non-string '${name}'`, () => {
          const p = only({ ...base, [name]: 7 });
          assert.equal(p.rule, 'type');
          assert.equal(p.message, `'${name}' must be a string, got number 7`);
        });

        it(`reports an empty '${name}'`, () => {
          const p = only({ ...base, [name]: '' });
          assert.equal(p.rule, 'empty');
          assert.equal(p.message, `'${name}' must not be an empty string`);
        });
      }
    });

    describe(`time (${base.specversion})`, () => {
      it('accepts RFC 3339 timestamps', () => {
        for (const time of [
          '2024-05-01T12:00:00Z',
          '2024-05-01t12:00:00.123456-07:30',
          '2016-12-31T23:59:60Z',
        ]) {
          assert.deepEqual(validateCloudEvent({ ...base, time }), [], time);
        }
      });

      it('reports a time that is not RFC 3339', () => {
        const p = only({ ...base, time: 'yesterday' });
        assert.deepEqual(rules([p]), ['time format']);
        assert.equal(
          p.message,
          `'time' must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z, got "yesterday"`,
        );
        for (const time of [
          '2024-05-01',
          '2024-05-01T12:00:00',
          'Wed, 01 May 2024 12:00:00 GMT',
          '1714564800',
        ]) {
          assert.deepEqual(rules(validateCloudEvent({ ...base, time })), ['time format'], time);
        }
      });

      it('reports a time that is not a string, or empty', () => {
        assert.deepEqual(rules(validateCloudEvent({ ...base, time: 1714564800 })), ['time type']);
        assert.deepEqual(rules(validateCloudEvent({ ...base, time: '' })), ['time empty']);
      });
    });

    it(`treats null optional attributes as absent (${base.specversion})`, () => {
      assert.deepEqual(validateCloudEvent({ ...base, time: null, gw: null }), []);
    });

    it(`reports a 'gw' that is not an object, and mistyped gw keys (${base.specversion})`, () => {
      assert.equal(only({ ...base, gw: 'abc' }).message, `'gw' must be an object, got the string "abc"`);
      assert.equal(only({ ...base, gw: ['x'] }).message, `'gw' must be an object, got an array`);
      const problems = validateCloudEvent({ ...base, gw: { correlation: 5, target_partition: { a: 1 } } });
      assert.deepEqual(
        problems.map((p) => p.message),
        [
          `'gw.correlation' must be a string, got number 5`,
          `'gw.target_partition' must be a string, got an object`,
        ],
      );
    });
  }

  it('names the supported versions for an unsupported specversion', () => {
    const p = only({ ...v1, specversion: '0.3' });
    assert.deepEqual(p, {
      attribute: 'specversion',
      rule: 'specversion',
      message: `'specversion' "0.3" is not supported; supported versions are 0.2, 1.0`,
    });
    assert.equal(only({ ...v1, specversion: 1 }).message, `'specversion' must be a string, got number 1`);
  });

  it('checks the 0.2 attributes contenttype and schemaurl', () => {
    assert.equal(
      only({ ...v02, contenttype: 'json' }).message,
      `'contenttype' must be a media type such as application/json, got "json"`,
    );
    assert.deepEqual(rules(validateCloudEvent({ ...v02, schemaurl: 3 })), ['schemaurl type']);
    assert.deepEqual(rules(validateCloudEvent({ ...v02, schemaurl: '' })), ['schemaurl empty']);
  });

  it('checks the 1.0 attributes datacontenttype, dataschema and subject', () => {
    assert.equal(
      only({ ...v1, datacontenttype: 'text plain' }).message,
      `'datacontenttype' must be a media type such as application/json, got "text plain"`,
    );
    assert.equal(
      only({ ...v1, dataschema: 'schemas/greeting.json' }).message,
      `'dataschema' must be an absolute URI, got "schemas/greeting.json"`,
    );
    assert.deepEqual(rules(validateCloudEvent({ ...v1, subject: '' })), ['subject empty']);
    assert.deepEqual(rules(validateCloudEvent({ ...v1, subject: false })), ['subject type']);
  });

  it('checks data_base64 (1.0)', () => {
    assert.deepEqual(validateCloudEvent({ ...v1, data_base64: 'aGVsbG8=' }), []);
    assert.equal(
      only({ ...v1, data_base64: 'not base64!' }).message,
      `'data_base64' must be base64 encoded (RFC 4648)`,
    );
    assert.deepEqual(rules(validateCloudEvent({ ...v1, data_base64: 12 })), ['data_base64 type']);
    assert.deepEqual(only({ ...v1, data: 'x', data_base64: 'eA==' }), {
      attribute: 'data',
      rule: 'exclusive',
      message: `'data' and 'data_base64' must not both be present`,
    });
  });

  it('checks 1.0 extension attribute names', () => {
    assert.equal(
      only({ ...v1, partitionKey: 'k' }).message,
      `extension attribute "partitionKey" must be named with lower-case letters a-z and digits 0-9 only (CloudEvents 1.0)`,
    );
    assert.deepEqual(rules(validateCloudEvent({ ...v1, target_partition: 'k' })), ['target_partition name']);
    assert.deepEqual(rules(validateCloudEvent({ ...v1, 'my-ext': 'k' })), ['my-ext name']);
    assert.deepEqual(validateCloudEvent({ ...v1, abcdefghij0123456789: 'twenty characters' }), []);
    assert.equal(
      only({ ...v1, abcdefghij0123456789x: 'k' }).message,
      `extension attribute 'abcdefghij0123456789x' must not be longer than 20 characters (CloudEvents 1.0)`,
    );
  });

  it('checks 1.0 extension values, allowing the gw object', () => {
    assert.deepEqual(validateCloudEvent({ ...v1, gw: { headers: { host: 'x' } } }), []);
    assert.equal(
      only({ ...v1, meta: { a: 1 } }).message,
      `extension attribute 'meta' must be a string, integer or boolean (CloudEvents 1.0), got an object`,
    );
    assert.deepEqual(rules(validateCloudEvent({ ...v1, ratio: 0.5 })), ['ratio type']);
    assert.deepEqual(rules(validateCloudEvent({ ...v1, big: 2 ** 31 })), ['big type']);
    assert.deepEqual(validateCloudEvent({ ...v1, small: -(2 ** 31) }), []);
  });

  it('reports every problem at once', () => {
    const problems = validateCloudEvent({ specversion: '1.0', id: '', source: 5, time: 'now', Bad: 'x' });
    assert.deepEqual(rules(problems), [
      'id empty',
      'type required',
      'source type',
      'time format',
      'Bad name',
    ]);
  });

  it('refuses control characters, lone surrogates and noncharacters in every String attribute', () => {
    const forged = 'greeting\nevent: admin.command\ndata: {}\n\n';
    assert.deepEqual(rules(validateCloudEvent({ ...v1, type: forged })), ['type character']);
    assert.match(
      only({ ...v1, type: forged }).message,
      /'type' must not contain control characters .* U\+000A at position 8/,
    );
    const v1Attributes = {
      specversion: '1.0\r',
      id: 'e\u0000',
      source: '/s\r\n',
      subject: 'a\u007f',
      datacontenttype: 'text/plain\n',
      dataschema: 'https://example.com/\u0085',
      time: '2024-05-01T12:00:00Z\n',
      myext: 'lone \ud800',
      other: 'x\uffff',
    };
    for (const [name, value] of Object.entries(v1Attributes)) {
      const problems = validateCloudEvent({ ...v1, [name]: value });
      assert.ok(
        problems.some((p) => p.attribute === name && p.rule === 'character'),
        `${name}: ${JSON.stringify(problems)}`,
      );
    }
    for (const [name, value] of Object.entries({
      schemaurl: 's\n',
      contenttype: 'text/plain\r',
      ext: '\t',
    })) {
      assert.deepEqual(rules(validateCloudEvent({ ...v02, [name]: value })), [`${name} character`]);
    }
  });

  it('accepts text the type system allows: non-ASCII letters, emoji, U+2028', () => {
    assert.deepEqual(validateCloudEvent({ ...v1, type: 'café.😀', subject: 'a\u2028b', myext: 'ü' }), []);
    assert.deepEqual(validateCloudEvent({ ...v02, data: 'line\nbreaks in data are fine' }), []);
  });

  it('checks only the common attributes when the specversion is unsupported', () => {
    const problems = validateCloudEvent({
      specversion: '9.9',
      id: 'x',
      type: 't',
      source: 's',
      Bad: { a: 1 },
    });
    assert.deepEqual(rules(problems), ['specversion specversion']);
  });
});

describe('assertCloudEvent', () => {
  it('returns a valid event', () => {
    assert.equal(assertCloudEvent(v1), v1);
  });

  it('throws InvalidCloudEventError with every problem in the list and the message', () => {
    assert.throws(
      () => assertCloudEvent({ specversion: '0.2', type: '' }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidCloudEventError);
        assert.deepEqual(rules([...error.problems]), ['id required', 'type empty', 'source required']);
        assert.equal(
          error.message,
          `invalid CloudEvent: 'id' is required; 'type' must not be an empty string; 'source' is required`,
        );
        return true;
      },
    );
  });
});
