import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AppProperties } from '../../src/config/app-properties.ts';
import { CollectingReport } from '../../src/config/problem-report.ts';
import { loadRestFiles, parseRestYaml } from '../../src/config/rest-yaml-loader.ts';

/** A `${key}` placeholder as rest.yaml writes it. */
const ref = (key: string) => `$${'{'}${key}}`;

describe('rest.yaml parser', () => {
  it('parses YAML 1.2 into plain data', () => {
    const doc = parseRestYaml(
      'rest:\n  - service: a.b\n    methods: [GET]\n    url: /x\n    tracing: true\n',
      'r.yaml',
    );
    assert.deepEqual(doc, { rest: [{ service: 'a.b', methods: ['GET'], url: '/x', tracing: true }] });
    // YAML 1.2: `on`/`yes` are strings, not booleans.
    assert.deepEqual(parseRestYaml('a: yes\n', 'r.yaml'), { a: 'yes' });
  });

  it('names file, line and column of a syntax error', () => {
    const err = parseRestYaml('rest:\n  - service: a.b\n    methods: [GET\n    url: /x\n', '/cfg/rest.yaml');
    assert.equal(typeof err, 'string');
    assert.match(err as string, /^Unable to load REST entries from \/cfg\/rest\.yaml:\d+:\d+ - /);
  });

  it('refuses a document that is not a map', () => {
    assert.match(parseRestYaml('- a\n- b\n', 'x.yaml') as string, /must be a map of sections/);
    assert.deepEqual(parseRestYaml('', 'x.yaml'), {});
  });

  it('substitutes key:default placeholders from properties and environment, and skips missing files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rest-yaml-'));
    const file = join(dir, 'rest.yaml');
    writeFileSync(
      file,
      `cors:\n  - id: c\n    options: ["Access-Control-Allow-Origin: ${ref('api.origin:*')}"]\n    headers: ["X: ${ref('app.name')}", "Y: ${ref('missing')}"]\n`,
    );
    const props = new AppProperties(new Map([['app.name', 'demo']]), { API_ORIGIN: 'https://a.example' });
    const report = new CollectingReport();
    const files = loadRestFiles([file, join(dir, 'none.yaml')], props, report);
    assert.equal(files.length, 1);
    const cors = (files[0]!.content['cors'] as Array<Record<string, string[]>>)[0]!;
    assert.deepEqual(cors['options'], ['Access-Control-Allow-Origin: https://a.example']);
    assert.deepEqual(cors['headers'], ['X: demo', `Y: ${ref('missing')}`]);
    assert.match(report.warnings[0]!, /none\.yaml - file not found/);
  });
});
