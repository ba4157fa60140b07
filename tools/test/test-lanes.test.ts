/**
 * How the runner reads a test file's lane (tools/test-lanes.ts), on files of this repository: the
 * brokers a file restarts come from its calls, those it uses from its text, and two files conflict
 * only when one disrupts a broker the other uses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conflicts, laneOf } from '../test-lanes.ts';

const read = (file: string) => laneOf(new URL(`../../${file}`, import.meta.url).pathname);

describe('test lanes', () => {
  it('reads the broker a file restarts from its calls', () => {
    const kafka = read('packages/bus/test/kafka-bus.test.ts');
    assert.equal(kafka.lane, 'alone');
    assert.deepEqual([...kafka.disrupts], ['kafka']);
    assert.deepEqual([...read('packages/bus/test/kinesis-bus.test.ts').disrupts], ['kinesis']);
  });

  it('counts every broker an end-to-end file could reach as used, and a declared one as disrupting all', () => {
    const e2e = read('test-e2e/test/rolling-restart.test.ts');
    assert.equal(e2e.lane, 'shared');
    assert.ok(['kafka', 'redis', 'nats', 'kinesis'].every((b) => e2e.uses.has(b as never)));
    assert.equal(read('services/push-hub/test/control-streams.test.ts').disrupts.size, 7);
  });

  it('reads a file with no broker and no process as unit', () => {
    const unit = read('packages/service-kit/test/canonical-path.test.ts');
    assert.equal(unit.lane, 'unit');
    assert.equal(unit.uses.size, 0);
  });

  it('lets a restart of one broker run beside the users of another, and never beside its own', () => {
    const kafka = read('packages/bus/test/kafka-bus.test.ts');
    const redisRestart = read('packages/store/test/redis-store.test.ts');
    const redisUser = read('services/blacklist/test/session-blacklist.test.ts');
    const e2e = read('test-e2e/test/rolling-restart.test.ts');
    const unit = read('packages/service-kit/test/canonical-path.test.ts');
    assert.ok(redisUser.uses.has('redis') && !redisUser.uses.has('kafka'), [...redisUser.uses].join());
    assert.equal(conflicts(kafka, redisRestart), false);
    assert.equal(conflicts(redisRestart, redisUser), true);
    assert.equal(conflicts(kafka, redisUser), false);
    assert.equal(conflicts(kafka, e2e), true);
    assert.equal(conflicts(e2e, kafka), true);
    assert.equal(conflicts(kafka, unit), false);
    assert.equal(conflicts(e2e, redisUser), false);
  });
});
