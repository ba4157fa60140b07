import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { createLogger, type LogFormat } from '../src/index.ts';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

function capture(format: LogFormat, projectId?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { lines, logger: createLogger({ name: 't', format, projectId, destination }) };
}

/** Runs `fn` as if inside a request whose active span has these ids. */
function inSpan(traceFlags: number, fn: () => void): void {
  const span = trace.wrapSpanContext({ traceId, spanId, traceFlags });
  context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
}

describe('trace fields of log lines', () => {
  const manager = new AsyncLocalStorageContextManager();
  before(() => context.setGlobalContextManager(manager.enable()));
  after(() => context.disable());

  it('GCL: the project form of logging.googleapis.com/trace, the span id, the sampled flag', () => {
    const { lines, logger } = capture('GCL', 'my-project');
    inSpan(1, () => logger.child({ service: 'proxy' }).info({ path: '/a' }, 'inside'));
    logger.info('outside');
    assert.equal(lines[0]!['message'], 'inside');
    assert.equal(lines[0]!['severity'], 'INFO');
    assert.equal(lines[0]!['logging.googleapis.com/trace'], `projects/my-project/traces/${traceId}`);
    assert.equal(lines[0]!['logging.googleapis.com/spanId'], spanId);
    assert.equal(lines[0]!['logging.googleapis.com/trace_sampled'], true);
    assert.equal(lines[0]!['path'], '/a', 'the line keeps its own fields');
    assert.equal(lines[1]!['logging.googleapis.com/trace'], undefined, 'nothing outside a span');
    assert.equal(lines[1]!['logging.googleapis.com/spanId'], undefined);
  });

  it('GCL without a project id: the bare trace id; an unsampled span says so', () => {
    const { lines, logger } = capture('GCL');
    inSpan(0, () => logger.warn('inside'));
    assert.equal(lines[0]!['logging.googleapis.com/trace'], traceId);
    assert.equal(lines[0]!['logging.googleapis.com/trace_sampled'], false);
  });

  it("JSON: OpenTelemetry's trace_id, span_id and trace_flags", () => {
    const { lines, logger } = capture('JSON');
    inSpan(1, () => logger.info('inside'));
    logger.info('outside');
    assert.equal(lines[0]!['trace_id'], traceId);
    assert.equal(lines[0]!['span_id'], spanId);
    assert.equal(lines[0]!['trace_flags'], '01');
    assert.equal(lines[1]!['trace_id'], undefined);
  });

  it('a line never carries the fields of an earlier one', () => {
    const { lines, logger } = capture('JSON');
    logger.info({ a: 1 }, 'first');
    logger.info('second');
    assert.equal(lines[1]!['a'], undefined);
  });
});
