/**
 * Mercury's FlowTests.externalStateMachineTest and externalStateMachineFlowTest over this engine's
 * HTTP surface: a PUT whose flow sends `ext:` key-values to the external state machine (a function,
 * or a flow that calls it), then a GET whose flow reads them back from that function. Mercury's
 * flows, rest.yaml entries and state machine are in fixtures/mercury-ext-state (see its flows.yaml
 * for what was adapted). The state machine keeps values per trace id, so both requests carry the
 * same X-Trace-Id, as Mercury's test client does with its PostOffice's trace id.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import stateMachine from './fixtures/mercury-ext-state/functions/ext-state-machine.ts';
import { type RunningEngine, startEngine } from './engine-fixture.ts';

const folder = join(import.meta.dirname, 'fixtures', 'mercury-ext-state');
let run: RunningEngine;

before(async () => {
  run = await startEngine({ REST_CONFIG_FOLDER: folder, FUNCTIONS_PATH: join(folder, 'functions') });
});
after(() => run.stop());

/** Mercury's executeExtStateMachine, step by step. */
async function putThenGet(putPath: string, traceId: string): Promise<void> {
  const payload = { hello: 'world' };
  const put = await fetch(`${run.base}${putPath}test`, {
    method: 'PUT',
    headers: { accept: 'application/json', 'content-type': 'application/json', 'x-trace-id': traceId },
    body: JSON.stringify(payload),
  });
  assert.equal(put.status, 200);
  assert.deepEqual(await put.json(), payload);
  // The state machine has one instance: its calls run in order, so the PUT's writes come first.
  const get = await fetch(`${run.base}/api/ext/state/test`, {
    headers: { accept: 'application/json', 'x-trace-id': traceId },
  });
  const body = (await get.json()) as Record<string, unknown>;
  assert.equal(get.status, 200, JSON.stringify(body));
  assert.equal(body['user'], 'test');
  assert.deepEqual(body['payload'], payload);
  // As Mercury's test ends: the state machine called directly clears the trace's values.
  const headers = { my_trace_id: traceId, type: 'clear', key: '*' };
  assert.equal(await stateMachine.handleEvent(headers, {}, 1), true);
}

describe("Mercury's external state machine tests", () => {
  it('externalStateMachineTest: ext: to a function, read back by the next request', async () => {
    await putThenGet('/api/ext/state/', 'ext-101');
  });

  it('externalStateMachineFlowTest: ext: to flow://ext-state-machine, read back the same way', async () => {
    await putThenGet('/api/ext/state/flow/', 'ext-102');
  });
});
