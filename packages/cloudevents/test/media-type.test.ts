import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { essence, isJsonMediaType, isMediaType, isTextMediaType } from '../src/index.ts';

describe('media types', () => {
  it('recognises media type syntax with parameters', () => {
    for (const text of [
      'application/json',
      'text/plain; charset=utf-8',
      'multipart/mixed; boundary="a b"',
      'a/b;',
    ]) {
      assert.equal(isMediaType(text), true, text);
    }
    for (const text of ['json', 'text plain', 'text/', '/json', 'text/plain; charset', 'a/b/c']) {
      assert.equal(isMediaType(text), false, text);
    }
  });

  it('takes the essence in lower case without parameters', () => {
    assert.equal(essence('Application/CloudEvents+JSON; charset=UTF-8'), 'application/cloudevents+json');
    assert.equal(essence(undefined), undefined);
    assert.equal(essence('  '), undefined);
  });

  it('tells JSON types', () => {
    for (const type of [
      'application/json',
      'APPLICATION/JSON; charset=utf-8',
      'text/json',
      'application/vnd.api+json',
    ]) {
      assert.equal(isJsonMediaType(type), true, type);
    }
    for (const type of [undefined, 'text/plain', 'application/jsonx', 'application/octet-stream']) {
      assert.equal(isJsonMediaType(type), false, String(type));
    }
  });

  it('tells text types', () => {
    for (const type of ['text/plain', 'text/csv; charset=utf-8', 'application/xml', 'image/svg+xml']) {
      assert.equal(isTextMediaType(type), true, type);
    }
    for (const type of [undefined, 'application/octet-stream', 'image/png', 'application/json']) {
      assert.equal(isTextMediaType(type), false, String(type));
    }
  });
});
