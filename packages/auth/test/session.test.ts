import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JsonPointerError, SessionFields } from '../src/index.ts';

describe('session fields', () => {
  it('reads jti and username by default', () => {
    const fields = new SessionFields();
    assert.equal(fields.sessionId({ jti: 'abc', username: 'alice' }), 'abc');
    assert.equal(fields.userName({ jti: 'abc', username: 'alice' }), 'alice');
  });

  it('follows the configured pointers, nested ones included', () => {
    const fields = new SessionFields({ sessionField: '/session/id', userField: '/profile/names/0' });
    const claims = { jti: 'not-this', session: { id: 's-1' }, profile: { names: ['bob', 'robert'] } };
    assert.equal(fields.sessionId(claims), 's-1');
    assert.equal(fields.userName(claims), 'bob');
  });

  it('turns numeric ids into text', () => {
    const fields = new SessionFields({ sessionField: '/sid' });
    assert.equal(fields.sessionId({ sid: 42 }), '42');
    assert.equal(fields.sessionId({ sid: 1.5 }), '1.5');
  });

  it('gives undefined for absent, empty or non-scalar values', () => {
    const fields = new SessionFields();
    for (const jti of [undefined, '', null, true, { id: 1 }, ['a']])
      assert.equal(fields.sessionId({ jti }), undefined, JSON.stringify(jti));
    assert.equal(fields.userName({}), undefined);
  });

  it('refuses a pointer that does not parse', () => {
    assert.throws(() => new SessionFields({ sessionField: 'jti' }), JsonPointerError);
  });
});
