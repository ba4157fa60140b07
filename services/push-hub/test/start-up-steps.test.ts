/**
 * A hub that is not ready says what it waits on, at the log level it runs at in production (warn):
 * its Kafka broker takes the connection and never answers, and the process, not listening yet,
 * names the step it is still waiting for every 10 s. (A restarted hub once took a minute to listen
 * in CI with nothing in its log to say why.)
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, before, it } from 'node:test';
import { freePort, spawnService } from '@gatehouse/testkit';

const held: Socket[] = [];
const silentBroker = createServer((socket) => {
  held.push(socket);
  socket.on('error', () => {});
});
let brokerPort: number;

before(async () => {
  brokerPort = await freePort();
  await new Promise<void>((resolve) => silentBroker.listen(brokerPort, '127.0.0.1', resolve));
});
after(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silentBroker.close(resolve));
});

it('names the start-up step it is still waiting for, at warn, while it is not ready', async () => {
  await assert.rejects(
    spawnService({
      entry: 'services/push-hub/src/main.ts',
      name: 'hub-waiting',
      publicPort: true,
      env: {
        LOG_LEVEL: 'warn',
        FANOUT_BUS: 'kafka',
        KAFKA_BROKERS: `127.0.0.1:${brokerPort}`,
        CONTROL_BUS: 'memory',
        STORE: 'memory',
        TOKEN_SECRET: 'start-up-steps-token-secret',
      },
      readyTimeoutMs: 25_000,
    }),
    // It gives up on the broker after about 20 s (kafkajs' retries), or is still waiting at 25 s.
    (err: Error) => {
      assert.match(err.message, /exited during start-up|not ready after 25000 ms/);
      assert.match(
        err.message,
        /start-up: still waiting for the fan-out (bus \(kafka\)|stream \(gw.events\)) after 1\d s/,
      );
      return true;
    },
  );
});
