/**
 * The REST engine makes each request's path canonical once, at its own port, before routing
 * (@gatehouse/service-kit canonical-path.ts): every spelling of a path is routed, authenticated and
 * handed to functions exactly as its canonical path is, and a target with no canonical form is
 * refused with 400 in the caller's format, naming nothing of what was sent. Run against the
 * example app (examples/rest-app), whose `/api/secure/hello` needs a token and whose open
 * `/api/files/*` takes every deeper path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { canonicalPath } from '@gatehouse/service-kit';
import { type RawAnswer, type RunningEngine, rawRequest, startEngine } from './engine-fixture.ts';

let run: RunningEngine;
before(async () => {
  run = await startEngine();
});
after(() => run.stop());

const get = (target: string, headers: Record<string, string> = {}) =>
  rawRequest(run.base, 'GET', target, headers);

/** What the engine decided: the status, and which endpoint saw what (or the error message). */
function decision(answer: RawAnswer): string {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    body = { text: answer.body };
  }
  const route = (body['event_headers'] as Record<string, unknown> | undefined)?.['my_route'];
  return JSON.stringify([
    answer.status,
    route,
    body['url'],
    body['path_parameters'],
    body['hello'],
    body['message'],
  ]);
}

const hex = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** Ways to spell `path` (`/a/b/c`): escapes, case, slashes, dot segments, separators, NUL, params. */
function spellingsOf(path: string): string[] {
  const out = new Set<string>();
  for (let i = 1; i < path.length; i++) {
    if (path[i] === '/') continue;
    out.add(path.slice(0, i) + hex(path[i]!) + path.slice(i + 1));
    out.add(path.slice(0, i) + hex(path[i]!).toUpperCase() + path.slice(i + 1));
  }
  const segments = path.split('/').slice(1);
  out.add(path.toUpperCase());
  out.add(`/${segments.map((s) => s[0]!.toUpperCase() + s.slice(1)).join('/')}`);
  out.add(`/${path}`);
  out.add(path.replaceAll('/', '//'));
  out.add(`${path}/`);
  out.add(`${path}//`);
  out.add(`${path}/.`);
  out.add(`${path}%00`);
  out.add(`${path};x=1`);
  for (let k = 1; k < segments.length; k++) {
    const head = `/${segments.slice(0, k).join('/')}`;
    const tail = segments.slice(k).join('/');
    for (const middle of ['./', 'x/../', '%2e/', 'x/%2e%2e/', 'x/%2E%2E/', '.%2e/', 'files/../', 'x/..%2f']) {
      out.add(`${head}/${middle}${tail}`);
    }
    for (const separator of ['%2f', '%2F', '%5c', '\\', '%c0%af', '%e0%80%af', '%252f']) {
      out.add(`${head}${separator}${tail}`);
    }
  }
  // Climbing out of the open wildcard into the secured path.
  out.add(`/api/files/../${segments.slice(1).join('/')}`);
  out.add(`/api/files/%2e%2e/${segments.slice(1).join('/')}`);
  out.add(`/api/files/x/../../${segments.slice(1).join('/')}`);
  return [...out];
}

describe('canonical request path at the REST engine', () => {
  it('routes every spelling of a path as it routes the canonical path: no bypass', async (t) => {
    const paths = ['/api/secure/hello', '/api/echo/1', '/api/hello/world', '/api/orders/A-1/items/b'];
    const expected = new Map<string, string>();
    let tried = 0;
    const differing: string[] = [];
    for (const path of paths) {
      for (const spelling of spellingsOf(path)) {
        const canonical = canonicalPath(spelling);
        let want: string;
        if (!canonical.ok) {
          want = JSON.stringify([400, undefined, undefined, undefined, undefined, 'Invalid URL path']);
        } else {
          if (!expected.has(canonical.path))
            expected.set(canonical.path, decision(await get(canonical.path)));
          want = expected.get(canonical.path)!;
        }
        const got = decision(await get(spelling));
        tried++;
        if (got !== want) differing.push(`${spelling}: ${got} (canonical: ${want})`);
      }
    }
    t.diagnostic(`${tried} spellings, ${differing.length} decided otherwise than their canonical path`);
    assert.ok(tried > 200, `${tried} spellings`);
    assert.equal(differing.length, 0, `${differing.length} differ:\n${differing.slice(0, 10).join('\n')}`);
    // The secured path stays secured in every spelling that reaches it.
    assert.equal(JSON.parse(expected.get('/api/secure/hello')!)[0], 401);
  });

  it('answers a target it cannot make canonical 400 in the caller format, echoing none of it', async () => {
    const target = '/api/echo/%2f<b>x</b>';
    const asJson = await get(target);
    assert.equal(asJson.status, 400);
    assert.deepEqual(JSON.parse(asJson.body), { message: 'Invalid URL path', type: 'error', status: 400 });
    const asXml = await get(target, { accept: 'application/xml' });
    assert.equal(asXml.status, 400);
    assert.match(asXml.headers['content-type'] as string, /xml/);
    assert.match(asXml.body, /<message>Invalid URL path<\/message>/);
    const asHtml = await get(target, { accept: 'text/html' });
    assert.equal(asHtml.status, 400);
    assert.match(asHtml.headers['content-type'] as string, /html/);
    for (const answer of [asJson, asXml, asHtml]) assert.doesNotMatch(answer.body, /<b>|%2f/i);
    for (const refused of [
      '/api/echo/a%5Cb',
      '/api/echo/a\\b',
      '/api/echo/a%00',
      '/api/echo/%zz',
      '/api/echo/%c0%ae',
    ]) {
      assert.equal((await get(refused)).status, 400, refused);
    }
  });

  it('hands functions and trace records the canonical path; path variables decoded per segment', async () => {
    const res = await get('/api//traced/./x/../a%20b%41?q=%3F');
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body) as Record<string, Record<string, string>>;
    assert.equal(body['url'] as unknown, '/api/traced/a%20bA');
    assert.deepEqual(body['path_parameters'], { id: 'a bA' });
    assert.equal(body['query_string'] as unknown, 'q=%3F');
    assert.equal(body['event_headers']!['my_trace_path'], 'GET /api/traced/a%20bA?q=%3F');
  });
});
