import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compileHeaderTransformSet,
  parseHeaderLine,
  transformHeaders,
} from '../../src/endpoints/header-transform.ts';

const compile = (spec: Record<string, unknown>) => compileHeaderTransformSet({ id: 'h', ...spec });

describe('header transforms', () => {
  it('drops names without regard to case and adds entries', () => {
    const { set } = compile({
      request: { drop: ['Upgrade-Insecure-Requests', 'X-Secret'], add: ['X-Added: yes'] },
    });
    const headers: Record<string, string> = {
      'upgrade-insecure-requests': '1',
      'x-secret': 's',
      accept: '*/*',
    };
    transformHeaders(headers, set.request!, (s) => s);
    assert.deepEqual(headers, { accept: '*/*', 'x-added': 'yes' });
  });

  it('keeps only the listed names when keep is set, ignoring drop', () => {
    const { set } = compile({ response: { keep: ['X-A'], drop: ['x-a'] } });
    const headers: Record<string, string> = { 'x-a': '1', 'x-b': '2' };
    transformHeaders(headers, set.response!, (s) => s);
    assert.deepEqual(headers, { 'x-a': '1' });
  });

  it('never drops essential headers', () => {
    const { set } = compile({ request: { keep: ['x-a'] } });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': '2',
      host: 'h',
      'x-b': '2',
    };
    transformHeaders(headers, set.request!, (s) => s);
    assert.deepEqual(headers, { 'content-type': 'application/json', 'content-length': '2', host: 'h' });
    const drop = compile({ request: { drop: ['Content-Type'] } }).set.request!;
    const h2: Record<string, string> = { 'content-type': 'text/plain' };
    transformHeaders(h2, drop, (s) => s);
    assert.deepEqual(h2, { 'content-type': 'text/plain' });
  });

  it('lets add override an existing header and warns about malformed add lines', () => {
    const { set, warnings } = compile({ response: { add: ['Cache-Control: no-store', 'broken'] } });
    const headers: Record<string, string> = { 'cache-control': 'max-age=60' };
    transformHeaders(headers, set.response!, (s) => s);
    assert.deepEqual(headers, { 'cache-control': 'no-store' });
    assert.match(warnings[0]!, /response\.add\[1\]/);
    assert.equal(set.request, undefined);
  });

  it('splits header lines at the first colon', () => {
    assert.deepEqual(parseHeaderLine('Location: http://x:80/a'), ['location', 'http://x:80/a']);
    assert.equal(parseHeaderLine('X-Empty:   '), undefined);
    assert.equal(parseHeaderLine(': v'), undefined);
    assert.equal(parseHeaderLine(42), undefined);
  });
});
