import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { validateRestDocument } from '../../src/config/rest-schema.ts';

const example = fileURLToPath(new URL('../../../../examples/rest-app/rest.yaml', import.meta.url));

describe('rest.yaml JSON Schema', () => {
  it('accepts the example app', () => {
    assert.deepEqual(validateRestDocument(parse(readFileSync(example, 'utf8'))), []);
  });

  it('requires the paths of a static-content filter', () => {
    const errors = validateRestDocument({ 'static-content': { filter: { service: 'page.filter' } } });
    assert.match(errors.join('\n'), /static-content\.filter must have required property 'path'/);
    assert.deepEqual(
      validateRestDocument({
        'static-content': { filter: { path: ['/private/*'], service: 'page.filter' } },
      }),
      [],
    );
  });

  it('flags what an editor should underline', () => {
    const errors = validateRestDocument({
      rest: [{ service: 'a.b', methods: ['get'], url: 'x', timeout: 'soon', tracing: 'yes', typo: 1 }],
      cors: [{ id: 'c', options: ['Origin: *'] }],
      'static-content': { filter: { path: ['**'] } },
    });
    const text = errors.join('\n');
    for (const expected of [
      /rest\.0\.methods\.0 must be equal to one of the allowed values/,
      /rest\.0\.url must match pattern/,
      /rest\.0\.tracing must be boolean/,
      /rest\.0 must NOT have additional properties/,
      /cors\.0 must have required property 'headers'/,
      /cors\.0\.options\.0 must match pattern/,
      /static-content\.filter must have required property 'service'/,
    ]) {
      assert.match(text, expected);
    }
  });
});
