/**
 * The metrics every host exports, read through /metrics as Prometheus reads them: readiness per
 * dependency (`gw_ready`, `gw_dependency_up`) and the HTTP answers of both surfaces by status
 * (`gw_http_responses_total`). The alerts of the chart (charts/gatehouse/templates/prometheusrule.yaml)
 * are written against these names and labels.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type GatewayService, Health, type RunningHost, sendJson } from '../src/index.ts';
import { startTestHost } from './test-host.ts';

const service: GatewayService = {
  name: 'answers',
  public: (req, res) => {
    if (req.url === '/fails') sendJson(res, 503, { error: 'down' });
    else if (req.url === '/throws') throw new Error('a bug');
    else if (req.url === '/ok') sendJson(res, 200, {});
    else return false;
    return true;
  },
};

describe('host metrics through /metrics', () => {
  let host: RunningHost;
  let storeUp = true;
  before(async () => {
    const health = new Health();
    health.addCheck('store', () => {
      if (!storeUp) throw new Error('redis refused the connection');
    });
    health.addCheck('fanout-bus', () => undefined);
    host = await startTestHost({ health, services: [service], publicPort: 0 });
  });
  after(() => host?.stop());

  const scrape = async () => (await fetch(`http://127.0.0.1:${host.apiPort}/metrics`)).text();

  it('report each readiness check as gw_dependency_up and the whole as gw_ready', async () => {
    storeUp = true;
    let text = await scrape();
    assert.match(text, /^gw_ready 1$/m);
    assert.match(text, /^gw_dependency_up\{dependency="store"\} 1$/m);
    assert.match(text, /^gw_dependency_up\{dependency="fanout-bus"\} 1$/m);
    storeUp = false;
    text = await scrape();
    assert.match(text, /^gw_ready 0$/m);
    assert.match(text, /^gw_dependency_up\{dependency="store"\} 0$/m);
    assert.match(text, /^gw_dependency_up\{dependency="fanout-bus"\} 1$/m);
    storeUp = true;
  });

  it('count the answers of each surface by status code', async () => {
    const edge = `http://127.0.0.1:${host.publicPort}`;
    for (const path of ['/ok', '/ok', '/fails', '/throws', '/nowhere'])
      await (await fetch(edge + path)).text();
    await (await fetch(`http://127.0.0.1:${host.apiPort}/nowhere`)).text();
    const text = await scrape();
    assert.match(text, /^gw_http_responses_total\{surface="public",code="200"\} 2$/m);
    assert.match(text, /^gw_http_responses_total\{surface="public",code="503"\} 1$/m);
    assert.match(text, /^gw_http_responses_total\{surface="public",code="500"\} 1$/m);
    assert.match(text, /^gw_http_responses_total\{surface="public",code="404"\} 1$/m);
    assert.match(text, /^gw_http_responses_total\{surface="internal",code="404"\} 1$/m);
  });
});
