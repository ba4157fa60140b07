/**
 * The internal API refuses a body that is not JSON where the OpenAPI document says JSON, before any
 * handler sees it, and leaves alone the operations that take any type and the other methods.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InternalApiAuth, type RunningHost, sendJson } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const token = 'json-bodies-test-token-0123456789';

describe('internal API: JSON bodies', () => {
  let host: RunningHost;
  const reached: string[] = [];
  before(async () => {
    host = await startTestHost({
      internalApiAuth: new InternalApiAuth(token),
      services: [
        {
          name: 'echo',
          internal: (req, res) => {
            reached.push(`${req.method} ${req.url}`);
            sendJson(res, 200, { reached: true });
            return true;
          },
        },
      ],
    });
  });
  after(() => host?.stop());

  const send = (method: string, path: string, contentType: string | undefined, auth = true) =>
    fetch(`http://127.0.0.1:${host.apiPort}${path}`, {
      method,
      headers: {
        ...(auth && { authorization: `Bearer ${token}` }),
        ...(contentType !== undefined && { 'content-type': contentType }),
      },
      body: contentType === undefined ? new Uint8Array(Buffer.from('{}')) : '{}',
    });

  it('answers 415 to a form, text or no content type on a JSON operation, and the handler never runs', async () => {
    for (const [method, path] of [
      ['POST', '/v3/apis'],
      ['PUT', '/v2/apis/some-id'],
      ['POST', '/v1/session-blacklist'],
      ['POST', '/v2/responses'],
    ] as const)
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=b',
        undefined,
      ]) {
        const res = await send(method, path, type);
        assert.equal(res.status, 415, `${method} ${path} ${type}`);
        assert.match(
          ((await res.json()) as { error: string }).error,
          /^the body must be JSON \(content-type: .*application\/json\)$/,
        );
      }
    assert.deepEqual(reached, []);
  });

  it('passes JSON, +json and the listed CloudEvents type on, in any case and with parameters', async () => {
    for (const [path, type] of [
      ['/v3/apis', 'application/json'],
      ['/v3/apis', 'Application/JSON; charset=utf-8'],
      ['/v3/apis', 'application/merge-patch+json'],
      ['/v1/responses', 'application/cloudevents+json'],
    ] as const)
      assert.equal((await send('POST', path, type)).status, 200, `${path} ${type}`);
  });

  it('leaves operations that take any type, other methods and other paths to their handler', async () => {
    reached.length = 0;
    for (const [method, path] of [
      ['POST', '/v3/messages'],
      ['POST', '/v3/responses'],
      ['DELETE', '/v3/apis/some-id'],
      ['POST', '/v3/apis/some-id/more'],
      ['POST', '/v9/custom'],
    ] as const)
      assert.equal((await send(method, path, 'text/plain')).status, 200, `${method} ${path}`);
    assert.equal(reached.length, 5);
  });

  it('answers 401 before 415: a caller without the token learns nothing of the body rules', async () => {
    assert.equal((await send('POST', '/v3/apis', 'text/plain', false)).status, 401);
  });
});
