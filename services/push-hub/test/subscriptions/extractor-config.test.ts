import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadExtractorConfig, parseExtractorConfig } from '../../src/subscriptions/extractor-config.ts';

describe('extractor config', () => {
  it('reads inline JSON or a file, fields ordered by stable index', () => {
    const json = {
      t: {
        b: { stable_field_index: 2, event: { json_pointer: '/data/b' } },
        a: { stable_field_index: 0, event: { json_pointer: '/data/a' }, jwt: { json_pointer: '/sub' } },
      },
    };
    const inline = loadExtractorConfig(JSON.stringify(json));
    assert.deepEqual(
      inline.get('t')!.map((f) => [f.name, f.jwtPointer]),
      [
        ['a', '/sub'],
        ['b', undefined],
      ],
    );
    const dir = mkdtempSync(join(tmpdir(), 'extractors-'));
    writeFileSync(join(dir, 'x.json'), JSON.stringify(json));
    assert.equal(loadExtractorConfig(join(dir, 'x.json')).get('t')!.length, 2);
    assert.equal(loadExtractorConfig(undefined).size, 0);
  });

  it('collects every problem into one error', () => {
    assert.throws(
      () =>
        parseExtractorConfig({
          t: {
            a: { stable_field_index: -1, event: { json_pointer: '/x' } },
            b: { stable_field_index: 1, event: { json_pointer: 'x' } },
            c: { stable_field_index: 1, event: { json_pointer: '/y' }, jwt: {} },
          },
        }),
      (err: Error) =>
        /t\.a: stable_field_index must be a non-negative integer/.test(err.message) &&
        /t\.b: event\.json_pointer must be a JSON pointer/.test(err.message) &&
        /t\.c: stable_field_index 1 is used twice/.test(err.message) &&
        /t\.c: jwt\.json_pointer/.test(err.message),
    );
    assert.throws(() => loadExtractorConfig('{not json'), /EXTRACTORS is not valid JSON/);
    assert.throws(() => loadExtractorConfig('/no/such/file.json'), /cannot read EXTRACTORS file/);
  });

  it('takes a type pattern as a key and refuses a malformed one at start', () => {
    const field = { f: { stable_field_index: 0, event: { json_pointer: '/data/f' } } };
    assert.deepEqual([...parseExtractorConfig({ 'a.*': field, 'a.>': field }).keys()], ['a.*', 'a.>']);
    assert.throws(() => parseExtractorConfig({ 'a.>.b': field }), /">" may only be the last segment/);
    assert.throws(() => parseExtractorConfig({ 'orders*': field }), /wildcards only as a whole segment/);
  });
});
