import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidBlacklistRequest, maxSessionIdLength, parseBlacklistRequest } from '../src/index.ts';

const limits = { maxValiditySeconds: 3600 };
const parse = (body: unknown) => parseBlacklistRequest(body, limits);

function rejection(body: unknown): string {
  try {
    parse(body);
  } catch (err) {
    assert.ok(err instanceof InvalidBlacklistRequest, String(err));
    return err.message;
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

describe('blacklist request body', () => {
  it('takes a session id and a whole number of seconds', () => {
    assert.deepEqual(parse({ sessionId: 'abc', validityInSeconds: 60 }), {
      sessionId: 'abc',
      validityInSeconds: 60,
    });
  });

  it('still accepts the number as a string, as older clients send it', () => {
    assert.deepEqual(parse({ sessionId: 'abc', validityInSeconds: '60' }), {
      sessionId: 'abc',
      validityInSeconds: 60,
    });
    assert.equal(parse({ sessionId: 'abc', validityInSeconds: ' 7 ' }).validityInSeconds, 7);
  });

  it('ignores fields it does not know', () => {
    assert.equal(parse({ sessionId: 's', validityInSeconds: 1, reason: 'stolen' }).sessionId, 's');
  });

  it('names the field in every rejection', () => {
    const cases: Array<[unknown, string]> = [
      [{ validityInSeconds: 60 }, 'Missing value for "sessionId"'],
      [{ sessionId: null, validityInSeconds: 60 }, 'Missing value for "sessionId"'],
      [{ sessionId: '', validityInSeconds: 60 }, 'Expected a non-empty string for "sessionId", got ""'],
      [{ sessionId: 42, validityInSeconds: 60 }, 'Expected a non-empty string for "sessionId", got 42'],
      [{ sessionId: 'abc' }, 'Missing value for "validityInSeconds"'],
      [
        { sessionId: 'abc', validityInSeconds: 'soon' },
        'Expected a number for "validityInSeconds", got "soon"',
      ],
      [
        { sessionId: 'abc', validityInSeconds: '1e3' },
        'Expected a number for "validityInSeconds", got "1e3"',
      ],
      [{ sessionId: 'abc', validityInSeconds: true }, 'Expected a number for "validityInSeconds", got true'],
      [
        { sessionId: 'abc', validityInSeconds: 1.5 },
        'Expected a whole number of seconds for "validityInSeconds", got 1.5',
      ],
      [
        { sessionId: 'abc', validityInSeconds: '2.5' },
        'Expected a whole number of seconds for "validityInSeconds", got "2.5"',
      ],
      [
        { sessionId: 'abc', validityInSeconds: 0 },
        'Expected a positive number for "validityInSeconds", got 0',
      ],
      [
        { sessionId: 'abc', validityInSeconds: '-5' },
        'Expected a positive number for "validityInSeconds", got "-5"',
      ],
      [
        { sessionId: 'abc', validityInSeconds: 3601 },
        'Expected at most 3600 for "validityInSeconds", got 3601',
      ],
    ];
    for (const [body, message] of cases) assert.equal(rejection(body), message, JSON.stringify(body));
  });

  it('refuses bodies that are not a JSON object', () => {
    for (const body of [null, [], 'abc', 42])
      assert.match(rejection(body), /^Expected a JSON object body with "sessionId" and "validityInSeconds"/);
  });

  it('bounds the session id', () => {
    assert.equal(
      parse({ sessionId: 'x'.repeat(maxSessionIdLength), validityInSeconds: 1 }).sessionId.length,
      1024,
    );
    assert.equal(
      rejection({ sessionId: 'x'.repeat(maxSessionIdLength + 1), validityInSeconds: 1 }),
      `Expected at most ${maxSessionIdLength} characters for "sessionId", got ${maxSessionIdLength + 1}`,
    );
  });
});
