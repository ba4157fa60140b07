/**
 * GET /api/headers: answers with headers of its own. The endpoint's header set drops
 * `x-internal` and adds security headers; `trace_id` never leaves the engine.
 */
import { defineFunction, EventEnvelope } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.headers',
  handleEvent: () =>
    new EventEnvelope()
      .setHeader('X-Custom', 'kept')
      .setHeader('X-Internal', 'secret')
      .setHeader('trace_id', 'hidden')
      .setBody({ ok: true }),
});
