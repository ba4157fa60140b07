import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignedTokenCodec } from '@gatehouse/auth';
import { createEvent } from '@gatehouse/cloudevents';
import { PendingResponses } from '../../src/responses/pending-responses.ts';
import { parseBinaryResponse, parseCloudEventResponse } from '../../src/responses/response-message.ts';

const codec = new SignedTokenCodec('a-test-secret-of-sufficient-length', 'correlation');

describe('PendingResponses', () => {
  it('completes a waiting request once, by the id inside its correlation token', async () => {
    const pending = new PendingResponses(codec, 'replica-a');
    const wait = pending.open(5000);
    const owner = pending.decode(wait.correlation);
    assert.equal(owner?.replica, 'replica-a');
    const response = { status: 201, headers: {}, body: Buffer.from('done') };
    assert.equal(pending.deliver(owner!.id, response), true);
    assert.equal(pending.deliver(owner!.id, response), false, 'a second response finds nobody waiting');
    assert.deepEqual(await wait.response, response);
    assert.equal(pending.size, 0);
  });

  it('resolves undefined on time-out and on cancel, and refuses altered or foreign tokens', async () => {
    const pending = new PendingResponses(codec, 'replica-a');
    const short = pending.open(20);
    assert.equal(await short.response, undefined);
    const cancelled = pending.open(5000);
    cancelled.cancel();
    assert.equal(await cancelled.response, undefined);
    const token = pending.open(5000).correlation;
    const altered = token.slice(0, 4) + (token[4] === 'A' ? 'B' : 'A') + token.slice(5);
    assert.equal(pending.decode(altered), undefined);
    const otherPurpose = new SignedTokenCodec('a-test-secret-of-sufficient-length', 'connection');
    assert.equal(pending.decode(otherPurpose.encode({ replica: 'replica-a', id: '1' })), undefined);
    pending.cancelAll();
  });
  it('never reuses an id after a restart under the same replica name (a per-boot epoch)', async () => {
    const before = new PendingResponses(codec, 'proxy-0');
    const old = before.open(5000);
    before.cancelAll();
    const after = new PendingResponses(codec, 'proxy-0');
    const fresh = after.open(5000);
    const oldOwner = after.decode(old.correlation)!;
    const freshOwner = after.decode(fresh.correlation)!;
    assert.equal(oldOwner.replica, freshOwner.replica);
    assert.notEqual(oldOwner.id, freshOwner.id, 'the first id of each life differs');
    const response = { status: 200, headers: {}, body: Buffer.from('late') };
    assert.equal(after.deliver(oldOwner.id, response), false, 'a response of the old life finds nobody');
    assert.equal(after.size, 1);
    assert.ok(freshOwner.expiresAt! > Date.now() + 5000, 'the token outlives the wait');
    after.cancelAll();
    assert.equal(await fresh.response, undefined);
  });
});

describe('response messages', () => {
  it('reads the binary form: correlation, code (200 when absent), headers passed on', () => {
    const parsed = parseBinaryResponse(
      {
        'GW-Correlation': 'c1',
        'gw-response-code': '418',
        'Content-Type': 'text/plain',
        host: 'x',
        'user-agent': 'curl',
        'x-custom': 'v',
      },
      Buffer.from('teapot'),
    );
    assert.deepEqual(parsed, {
      ok: true,
      correlation: 'c1',
      response: {
        status: 418,
        headers: { 'content-type': 'text/plain', 'x-custom': 'v' },
        body: Buffer.from('teapot'),
      },
    });
    const noCode = parseBinaryResponse({ 'gw-correlation': 'c2' }, Buffer.alloc(0));
    assert.ok(noCode.ok && noCode.response.status === 200);
  });

  it('refuses a missing correlation and a code that is not an integer 100–599', () => {
    assert.deepEqual(parseBinaryResponse({}, Buffer.alloc(0)), {
      ok: false,
      error: 'the gw-correlation header is missing',
    });
    for (const code of ['abc201', '99', '600', '2001'])
      assert.equal(
        parseBinaryResponse({ 'gw-correlation': 'c', 'gw-response-code': code }, Buffer.alloc(0)).ok,
        false,
      );
    assert.ok(parseBinaryResponse({}, Buffer.alloc(0), 'from-query').ok, 'the query parameter is a fallback');
  });

  it('reads the CloudEvent form: gw.correlation, gw.responseCode, the data with its content type', () => {
    const event = createEvent({
      type: 'done',
      contentType: 'application/json',
      data: { ok: true },
      gw: { correlation: 'c3', responseCode: 202 },
    });
    const parsed = parseCloudEventResponse(event);
    assert.ok(parsed.ok);
    assert.equal(parsed.correlation, 'c3');
    assert.equal(parsed.response.status, 202);
    assert.equal(parsed.response.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(parsed.response.body.toString()), { ok: true });
    assert.equal(parseCloudEventResponse(createEvent({ type: 'x' })).ok, false);
  });
});
