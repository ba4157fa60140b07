/**
 * The flow's input dataset (flow-input.ts) over HTTP: on an authenticated flow endpoint, the session
 * pairs the authentication function returned are `input.session`, and the flow's input mapping
 * hands them to its task's function, one by one (`input.session.<key>`) or as a whole map.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { configFolder, type RunningEngine, startEngine } from '../engine-fixture.ts';

const app = {
  'application.yml': 'rest.automation: true\n',
  'rest.yaml': `
rest:
  - service: http.flow.adapter
    flow: session-flow
    methods: [GET]
    url: /api/flow/session
    authentication: session.auth
    timeout: 10s
`,
  'flows.yaml': 'flows: ["session-flow.yml"]\n',
  'flows/session-flow.yml': `
flow:
  id: session-flow
  description: the session pairs through the input mapping
  ttl: 10s
first.task: session.input
tasks:
  - input:
      - "input.session.user -> user"
      - "input.session.role -> role"
      - "input.session -> session"
    process: session.input
    description: hand the session to the function
    output:
      - "result -> output.body"
    execution: end
`,
  // The session: the bearer token as \`user\`, the x-role header as \`role\` (the envelope's headers).
  'functions/session.ts': `
import { defineFunction, EventEnvelope, type TaskBody } from '@gatehouse/functions';

export default [
  defineFunction({
    route: 'session.auth',
    handleEvent: (_headers, request) => {
      const user = /^Bearer (\\S+)$/.exec(request.getHeader('authorization') ?? '')?.[1];
      if (user === undefined) return false;
      return new EventEnvelope()
        .setBody(true)
        .setHeader('user', user)
        .setHeader('role', request.getHeader('x-role') ?? 'none');
    },
  }),
  defineFunction<TaskBody>({ route: 'session.input', handleEvent: (_headers, input) => ({ received: input }) }),
];
`,
};

let run: RunningEngine;

before(async () => {
  run = await startEngine({ REST_CONFIG_FOLDER: configFolder(app) });
});
after(() => run.stop());

describe('flow input: the session', () => {
  it("maps the authenticated request's session pairs into the task's input", async () => {
    const user = `u-${randomUUID()}`;
    const role = `r-${randomUUID()}`;
    const res = await fetch(`${run.base}/api/flow/session`, {
      headers: { authorization: `Bearer ${user}`, 'x-role': role },
    });
    const body = (await res.json()) as { received: Record<string, unknown> };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(body.received, { user, role, session: { user, role } });
  });

  it('runs no flow for a request the authentication function rejects', async () => {
    const res = await fetch(`${run.base}/api/flow/session`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { message: 'Unauthorized', type: 'error', status: 401 });
  });
});
