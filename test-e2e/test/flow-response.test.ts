/**
 * A flow answers a proxy endpoint's `response_from: kafka`: the proxy (its own process) forwards
 * the request to the REST engine with its correlation id in the query and waits; the flow publishes
 * the answer with `kafka.notification` on the proxy's response topic (headers `gw-correlation` and
 * `gw-response-code`, the body), answers the proxy 202, and the client gets the flow's answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KafkaBus } from '@gatehouse/bus/kafka';
import { type EmbeddedGateway, ephemeralGatewaySettings, startEmbeddedGateway } from '@gatehouse/embedded';
import { dependencyAddress, type ServiceProcess, spawnService, uniqueName } from '@gatehouse/testkit';
import { flowBridgeApp } from '../src/flow-bridge-app.ts';

const responseTopic = uniqueName('flow-response');
const brokers = dependencyAddress.kafkaBrokers.join(',');

function proxyApis(restPort: number): string {
  const file = join(mkdtempSync(join(tmpdir(), 'flow-response-')), 'apis.json');
  const endpoint = { id: 'answer', method: 'POST', path_regex: '/api/answer', response_from: 'kafka' };
  writeFileSync(
    file,
    JSON.stringify([
      {
        id: 'flows',
        name: 'flows',
        version_data: { default: { endpoints: [endpoint] } },
        proxy: { target_url: '127.0.0.1', port: restPort },
      },
    ]),
  );
  return file;
}

describe('a flow answers response_from: kafka', () => {
  let gateway: EmbeddedGateway;
  let proxy: ServiceProcess;

  before(async () => {
    const kafka = new KafkaBus({ brokers: dependencyAddress.kafkaBrokers, clientId: responseTopic });
    await kafka.ensureTopic(responseTopic);
    await kafka.close();
    gateway = await startEmbeddedGateway({
      ...ephemeralGatewaySettings,
      REST_CONFIG_FOLDER: flowBridgeApp(),
      KAFKA_BROKERS: brokers,
      FLOW_RESPONSE_TOPIC: responseTopic,
      FLOW_NOTIFICATION_TOPICS: responseTopic,
    });
    proxy = await spawnService({
      entry: 'services/proxy/src/main.ts',
      publicPort: true,
      env: {
        PROXY_CONFIG_FILE: proxyApis(gateway.restPort!),
        PROXY_TARGET_ALLOW: '127.0.0.1',
        PROXY_KAFKA_RESPONSE_TOPICS: responseTopic,
        KAFKA_BROKERS: brokers,
        TOKEN_SECRET: 'flow-response-test-token-secret',
        CONTROL_BUS: 'memory',
        STORE: 'memory',
      },
    });
  });
  after(async () => {
    await proxy?.stop();
    await gateway?.stop();
  });

  it("gives the waiting client the status and body the flow published, not the flow's own 202", async () => {
    const res = await fetch(`${proxy.publicUrl}/api/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order: 7 }),
    });
    const text = await res.text();
    assert.equal(res.status, 201, `${text}\n${proxy.output()}`);
    assert.deepEqual(JSON.parse(text), { echo: { order: 7 }, by: 'answered by a flow' });
  });
});
