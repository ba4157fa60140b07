/**
 * How the public edge hands a request to the services' handlers, in order: a handler answers
 * `true` (it took the request) or `false` (not its own), either at once or as a promise; the first
 * that takes it ends the walk, none gives 404, and a handler that throws or rejects is a 500.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type GatewayService, type RunningHost, sendJson } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const asked: string[] = [];

function answer(res: ServerResponse, by: string): true {
  sendJson(res, 200, { by });
  return true;
}

const services: GatewayService[] = [
  {
    name: 'sync',
    public: (req, res) => {
      asked.push('sync');
      if (req.url === '/sync') return answer(res, 'sync');
      if (req.url === '/throws') throw new Error('a bug');
      return false;
    },
  },
  {
    name: 'async',
    public: async (req, res) => {
      asked.push('async');
      await new Promise((resolve) => setImmediate(resolve));
      if (req.url === '/async') return answer(res, 'async');
      if (req.url === '/rejects') throw new Error('a bug');
      return false;
    },
  },
  {
    name: 'listeners',
    public: (req, res) => {
      if (req.url !== '/listeners') return false;
      sendJson(res, 200, { close: res.listenerCount('close') });
      return true;
    },
  },
  {
    name: 'last',
    public: (req, res) => {
      asked.push('last');
      return req.url === '/last' ? answer(res, 'last') : false;
    },
  },
];

describe('public edge dispatch', () => {
  let host: RunningHost;
  before(async () => {
    host = await startTestHost({ services, publicPort: 0 });
  });
  after(() => host?.stop());

  async function get(path: string): Promise<{ status: number; body: unknown; asked: string[] }> {
    asked.length = 0;
    const res = await fetch(`http://127.0.0.1:${host.publicPort}${path}`);
    return { status: res.status, body: await res.json(), asked: [...asked] };
  }

  it('stops at the first handler that takes the request, answered at once or later', async () => {
    assert.deepEqual(await get('/sync'), { status: 200, body: { by: 'sync' }, asked: ['sync'] });
    assert.deepEqual(await get('/async'), { status: 200, body: { by: 'async' }, asked: ['sync', 'async'] });
    assert.deepEqual(await get('/last'), {
      status: 200,
      body: { by: 'last' },
      asked: ['sync', 'async', 'last'],
    });
  });

  it('hands a handler a response with one close listener of its own (an SSE stream holds them for hours)', async () => {
    const res = await fetch(`http://127.0.0.1:${host.publicPort}/listeners`);
    // Counting the response and forgetting it for keep-alive ending: one listener, not one each.
    assert.deepEqual(await res.json(), { close: 1 });
  });

  it('answers 404 when no handler takes it', async () => {
    const res = await get('/nobody');
    assert.equal(res.status, 404);
    assert.deepEqual(res.asked, ['sync', 'async', 'last']);
  });

  it('answers 500 for a handler that throws or rejects, and asks no handler after it', async () => {
    for (const path of ['/throws', '/rejects']) {
      const res = await get(path);
      assert.equal(res.status, 500, path);
      assert.equal(res.asked.includes('last'), false, path);
    }
  });
});
