/**
 * Secrets a deployment must give: every service that signs or checks connection tokens and
 * correlation ids refuses to start without TOKEN_SECRET (status 2, one line naming it), and a
 * JWKS over plain http to another host is refused at start unless JWT_JWKS_ALLOW_HTTP says so. The
 * services run as the processes they are in production; no broker is needed, they stop before.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const services = ['push-hub', 'publisher', 'proxy'];

/** Runs a service's main.ts until it exits (at most 15 s); its status and everything it wrote. */
async function runService(service: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [`${root}services/${service}/src/main.ts`], {
    // Memory store and buses: should a service start after all, it reaches no broker.
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      API_PORT: '0',
      INBOUND_PORT: '0',
      STORE: 'memory',
      FANOUT_BUS: 'memory',
      CONTROL_BUS: 'memory',
      KAFKA_BROKERS: '',
      NATS_SERVERS: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

describe('secrets a service will not start without', () => {
  for (const service of services)
    it(`${service} refuses to start without TOKEN_SECRET, naming it`, async () => {
      const { code, output } = await runService(service, { TOKEN_SECRET: '' });
      assert.equal(code, 2, output);
      assert.match(output, /TOKEN_SECRET: is required: a random secret of at least 16 characters/);
    });

  it('refuses a JWKS over plain http to a host that is not loopback', async () => {
    const env = {
      TOKEN_SECRET: 'required-secrets-test-token-secret',
      // Not loopback by name, yet local: without the check the fetch stays on this machine.
      JWT_JWKS_URL: 'http://0.0.0.0:9/jwks',
    };
    const refused = await runService('proxy', env);
    assert.equal(refused.code, 2, refused.output);
    assert.match(refused.output, /JWT_JWKS_URL: plain http to 0\.0\.0\.0 .*JWT_JWKS_ALLOW_HTTP=true/);
  });
});
