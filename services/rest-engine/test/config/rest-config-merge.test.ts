import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CollectingReport } from '../../src/config/problem-report.ts';
import { mergeRestFiles } from '../../src/config/rest-config-merge.ts';

const ep = (url: string, methods: string[], service = 'a.b') => ({ service, methods, url });

describe('rest.yaml merge', () => {
  it('concatenates endpoints of several files in order', () => {
    const report = new CollectingReport();
    const merged = mergeRestFiles(
      [
        { source: 'one.yaml', content: { rest: [ep('/a', ['GET'])] } },
        { source: 'two.yaml', content: { rest: [ep('/a', ['POST']), ep('/b', ['GET'])] } },
      ],
      report,
    );
    assert.deepEqual(
      merged.rest.map((r) => [r.source, r.index, (r.value as { url: string }).url]),
      [
        ['one.yaml', 0, '/a'],
        ['two.yaml', 0, '/a'],
        ['two.yaml', 1, '/b'],
      ],
    );
    assert.equal(merged.aborted, undefined);
    assert.deepEqual(report.errors, []);
  });

  it('aborts every endpoint on a duplicate across files, naming it and the file', () => {
    const report = new CollectingReport();
    const merged = mergeRestFiles(
      [
        { source: 'one.yaml', content: { rest: [ep('/api/hello/world', ['GET', 'PUT'])] } },
        { source: 'two.yaml', content: { rest: [ep('/API/hello/world/', ['PUT'])] } },
      ],
      report,
    );
    assert.deepEqual(merged.rest, []);
    assert.match(
      report.errors[0]!,
      /duplicated entry 'PUT \/API\/hello\/world\/' in two\.yaml \(first declared in one\.yaml\)/,
    );
  });

  it('aborts on a duplicate within one file, also with other variable names', () => {
    const report = new CollectingReport();
    const merged = mergeRestFiles(
      [{ source: 'one.yaml', content: { rest: [ep('/u/{id}', ['GET']), ep('/u/{name}', ['GET', 'POST'])] } }],
      report,
    );
    assert.equal(merged.rest.length, 0);
    assert.match(merged.aborted!, /'GET \/u\/\{name\}' in one\.yaml$/);
  });

  it('lets a later cors, headers or static-content replace an earlier one with a warning', () => {
    const report = new CollectingReport();
    const merged = mergeRestFiles(
      [
        {
          source: 'one.yaml',
          content: { cors: [{ id: 'c', v: 1 }], headers: [{ id: 'h', v: 1 }], 'static-content': { a: 1 } },
        },
        {
          source: 'two.yaml',
          content: { cors: [{ id: 'c', v: 2 }], headers: [{ id: 'h', v: 2 }], 'static-content': { a: 2 } },
        },
      ],
      report,
    );
    assert.deepEqual(merged.cors.get('c')!.value, { id: 'c', v: 2 });
    assert.deepEqual(merged.headers.get('h')!.value, { id: 'h', v: 2 });
    assert.deepEqual(merged.staticContent!.value, { a: 2 });
    assert.equal(report.warnings.length, 3);
    assert.match(report.warnings.join('\n'), /Duplicated 'static-content' in two\.yaml/);
    assert.match(report.warnings.join('\n'), /Duplicated 'cors' in two\.yaml will override a prior one 'c'/);
  });

  it('reports sections of the wrong shape', () => {
    const report = new CollectingReport();
    mergeRestFiles(
      [{ source: 'x.yaml', content: { rest: { url: '/a' }, cors: 'nope', headers: [{}] } }],
      report,
    );
    assert.equal(report.errors.length, 3);
    assert.match(report.errors.join('\n'), /'rest' section in x\.yaml must be a list/);
    assert.match(report.errors.join('\n'), /headers\[0\] in x\.yaml - missing id/);
  });
});
