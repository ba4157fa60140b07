// test-lane: alone (a replica's 1,000 clients come back on the other at once and the bench's client process parses every delivery: beside another file's load on two cores the recovery outwaits its bound)
/**
 * CI smoke of the cluster bench (bench/src/cluster-scale.bench.ts, scenarios S2 and S3): two push-hub
 * replicas and a publisher as processes of the built JavaScript on the real Kafka and Redis, 2,000
 * clients (SSE, WebSocket, long-polling, half with a JWT) in one client process, a steady event
 * rate, then replica 0 SIGKILLed and its clients back on the other. Asserted: every client back,
 * every (client, event) pair counted, lost 0 and duplicated 0. S3: 1,200 clients on two replicas, 100
 * reconnects a second for 5 s while events flow: every churned client back, lost 0, duplicated 0.
 * Speed is printed, never asserted.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { dependencyAddress } from '@gatehouse/testkit';
import { churnMarkdown, s2Markdown } from '../src/cluster/report.ts';
import { runChurn } from '../src/cluster/scenario-churn.ts';
import { type ClusterOptions, type Counted, runS2 } from '../src/cluster/scenarios.ts';

/** Every (client, event) pair owed was counted once: none lost, none twice, none to a client that did not ask. */
function assertEveryPairOnce(counted: Counted | undefined): void {
  assert.ok(counted, 'pairs counted');
  assert.ok(counted.owed > 0, 'pairs owed');
  assert.equal(counted.lost, 0, 'lost (client, event) pairs');
  assert.equal(counted.duplicated, 0, 'duplicated (client, event) pairs');
  assert.equal(counted.unwanted, 0, 'events delivered to clients that did not subscribe to them');
  assert.equal(counted.resyncs, 0, 'clients told to resync');
}

/** Two replicas, 10 events/s of 30 types, 3 per client, one client process. */
const smoke: Omit<ClusterOptions, 'connections'> = {
  replicas: 2,
  rate: 10,
  types: 30,
  subscriptions: 3,
  seconds: 5,
  connectRate: 1500,
  perClientProcess: 15_000,
  addresses: 50,
  // Bounds against a hang, not speed checks.
  connectTimeout: 120,
  recoveryTimeout: 120,
  log: (line) => console.log(line),
};

it('holds 2,000 clients over 2 replicas on Kafka and Redis, and a SIGKILL loses and repeats nothing', {
  timeout: 300_000,
}, async () => {
  assert.ok(dependencyAddress.kafkaBrokers.length > 0);
  const result = await runS2({ ...smoke, connections: 2000 });
  console.log(s2Markdown(result));
  assert.equal(result.stoppedAt, undefined, 'the run reached its end');
  assert.ok(result.kill, 'a replica was killed');
  assert.equal(result.kill.back, result.kill.watched, 'every client of the killed replica back');
  assert.ok(result.kill.watched > 0);
  assertEveryPairOnce(result.counted);
});

it('churns 100 reconnects a second over 2 replicas while events flow, and the churned clients lose and repeat nothing', {
  timeout: 300_000,
}, async () => {
  const result = await runChurn({ ...smoke, connections: 1200 }, [100]);
  console.log(churnMarkdown(result));
  assert.equal(result.stoppedAt, undefined, 'the run reached its end');
  const [step] = result.steps;
  assert.ok(step && step.requested > 0, 'reconnects were asked for');
  assert.equal(step.reopened, step.requested, 'every churned client is back');
  assertEveryPairOnce(result.counted);
});
