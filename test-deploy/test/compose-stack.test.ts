/**
 * docker-compose.yml as users run it, on this machine's podman (tools/containers.sh: locally built
 * stand-ins of the public images, the Gatehouse image from the Dockerfile, podman's Docker API):
 * `docker-compose up -d`, then only from outside, on the published 127.0.0.1 ports, what a user
 * does (user-checks.ts, shared with the Helm test), scaling push-hub to three replicas, Prometheus
 * scraping every replica; then the optional profiles (kafka-tls, schema-registry), started next to
 * the running stack while the checks above run, and the services moved onto them the way
 * .env.example says: the broker refuses all but its user over TLS, events and Avro records go
 * through it and the registry; and `docker-compose down -v` leaving nothing behind.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { uniqueName, waitFor } from '@gatehouse/testkit';
import { type ComposeStack, prepareContainers, startComposeStack } from '../src/compose-stack.ts';
import { checkKafkaTlsRefusals, type KafkaTlsAccess, kafkaTlsClient } from '../src/kafka-tls-checks.ts';
import {
  checkAvroThroughRegistry,
  checkClosedByDefault,
  checkEventDelivery,
  checkInternalApiHost,
  checkInternalApiToken,
  checkKafkaRoundTrip,
  checkPrometheusTargets,
  checkProxiedHttp,
  checkRestEngine,
  checkSessionKill,
  openSseOnSomeReplica,
  prometheusQuery,
  publishEvent,
} from '../src/user-checks.ts';

const project = 'gatehouse-compose-test';
const gatehouseServices = ['push-hub', 'publisher', 'proxy', 'blacklist', 'rest-engine'];
/** docker-compose.yml's replicas (deploy.replicas) of every service. */
const replicas: Record<string, number> = {
  kafka: 1,
  redis: 1,
  nats: 1,
  'push-hub': 2,
  publisher: 1,
  proxy: 2,
  blacklist: 1,
  'rest-engine': 1,
  edge: 1,
  prometheus: 1,
};
const minutes = 60_000;
/** The services with Kafka clients, which move to the profiles' broker and registry. */
const kafkaServices = ['push-hub', 'publisher', 'proxy'];

describe('docker-compose stack on podman, checked from outside', () => {
  let stack: ComposeStack;
  const started = performance.now();
  /** The services whose containers the default `up -d` made. */
  let defaultServices: string[] = [];
  /** The optional profiles' services, started once the default stack is healthy. */
  let profilesStarted: Promise<unknown> = Promise.resolve();

  before(
    async () => {
      const env = await prepareContainers(30 * minutes);
      stack = await startComposeStack(project, env);
      // Whatever an earlier, interrupted run left of this project, the profiles' services too.
      await stack.compose(['down', '-v', '--remove-orphans'], 3 * minutes, stack.profilesEnv);
      const upStarted = performance.now();
      await stack.compose(['up', '-d'], 10 * minutes);
      // Every container of the default stack exists once `up -d` is back (the edge is made last).
      defaultServices = [
        ...new Set((await stack.containers()).map((c) => c.Labels['com.docker.compose.service']!)),
      ].sort();
      // The profiles' broker and registry boot (JVMs, a minute of CPU on two cores) while the edge
      // gets healthy and the checks of the default stack run; their test waits for them.
      const profilesUp = performance.now();
      profilesStarted = stack
        .compose(['up', '-d', 'kafka-tls', 'schema-registry'], 5 * minutes, stack.profilesEnv)
        .then(() => {
          const s = ((performance.now() - profilesUp) / 1000).toFixed(1);
          process.stderr.write(`compose-stack: the profiles' services created and started: ${s}s\n`);
        });
      // A failure is reported by the test that waits for it; nothing may reject unobserved before.
      profilesStarted.catch(() => {});
      await stack.waitHealthy(replicas, 5 * minutes);
      const seconds = ((performance.now() - upStarted) / 1000).toFixed(1);
      process.stderr.write(`compose-stack: docker-compose up -d to every container healthy: ${seconds}s\n`);
    },
    { timeout: 45 * minutes },
  );

  after(
    async () => {
      await stack?.destroy();
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      process.stderr.write(`compose-stack: whole test, images to teardown: ${seconds}s\n`);
    },
    { timeout: 5 * minutes },
  );

  it('starts only the default services: the optional profiles stay off unless named', () => {
    assert.deepEqual(defaultServices, Object.keys(replicas).sort());
  });

  it('runs each service from the Gatehouse image as uid 10001, not root', async () => {
    for (const service of gatehouseServices) {
      for (const c of await stack.containers(service)) {
        const details = await stack.docker.inspect(c.Id);
        assert.equal(details.Config.User, '10001:10001', details.Name);
        // The process as the kernel sees it (podman here runs containers without a user namespace).
        const status = await readFile(`/proc/${details.State.Pid}/status`, 'utf8');
        assert.match(status, /^Uid:\s+10001\s+10001\s+10001\s+10001$/m, `${details.Name} runs as 10001`);
        const cmdline = (await readFile(`/proc/${details.State.Pid}/cmdline`, 'utf8')).split('\0');
        const args = cmdline.filter((a) => a !== '');
        // The built JavaScript (tools/build.ts), with stack traces mapped back to the TypeScript.
        assert.deepEqual([args[0], args.at(-1)], ['node', `services/${service}/dist/main.js`]);
        // A hub runs with the smaller young generation (docs/deploy.md, "Sizing a push hub").
        const nodeOptions = args.slice(1, -1);
        assert.deepEqual(
          nodeOptions,
          service === 'push-hub'
            ? ['--enable-source-maps', '--max-semi-space-size=8']
            : ['--enable-source-maps'],
          details.Name,
        );
      }
    }
  });

  it('delivers an event posted to the edge to SSE and WebSocket clients', async () => {
    await checkEventDelivery(stack.urls);
  });

  it('lets nobody without a valid token post events or subscribe (SUBMISSION_CHECK, SUBSCRIPTION_CHECK)', async () => {
    await checkClosedByDefault(stack.urls, stack.jwtSecretKey);
  });

  it('asks for INTERNAL_API_TOKEN on the internal API and answers only the names it is reached by', async () => {
    await checkInternalApiToken(stack.urls);
    await checkInternalApiHost(stack.urls);
  });

  it('proxies a request to the REST engine through an API definition registered on the internal API', async () => {
    await checkProxiedHttp(stack.urls, { host: 'rest-engine', port: 8085 });
  });

  it('answers a request through Kafka: a backend on the host consumes it and produces the correlated response', async () => {
    await checkKafkaRoundTrip(stack.urls, stack.kafkaBrokers);
  });

  it('serves the REST engine on its port', async () => {
    await checkRestEngine(stack.urls);
  });

  it('closes the connections of a session blacklisted through the internal API', async () => {
    await checkSessionKill(stack.urls, stack.jwtSecretKey);
  });

  it('scales push-hub to three replicas; after an edge reload the new one takes connections and events', async () => {
    const before = new Set((await stack.containers('push-hub')).map((c) => c.Id));
    await stack.compose(['up', '-d', '--scale', 'push-hub=3']);
    await stack.waitHealthy({ ...replicas, 'push-hub': 3 }, 2 * minutes);
    const added = (await stack.containers('push-hub')).filter((c) => !before.has(c.Id));
    assert.equal(added.length, 1);
    // A replica id is its host name (the container's short id) and a random suffix.
    const newReplica = `${(await stack.docker.inspect(added[0]!.Id)).Config.Hostname}-`;
    const type = uniqueName('deploy.scaled');
    const opened: Array<Awaited<ReturnType<typeof openSseOnSomeReplica>>> = [];
    try {
      // nginx resolved `push-hub` when it started: the new replica gets nothing yet.
      for (let i = 0; i < 6; i++)
        opened.push(await openSseOnSomeReplica(stack.urls, stack.tokenSecret, type));
      assert.ok(
        opened.every((o) => !o.replica.startsWith(newReplica)),
        `before the reload: ${opened.map((o) => o.replica)}`,
      );
      await stack.reloadEdge();
      const onNew = await waitFor(
        async () => {
          const o = await openSseOnSomeReplica(stack.urls, stack.tokenSecret, type);
          opened.push(o);
          return o.replica.startsWith(newReplica) ? o : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'a connection on the new replica' },
      );
      const id = await publishEvent(stack.urls, type, { scaled: true });
      await waitFor(() => opened.every((o) => o.connection.events(type).some((e) => e['id'] === id)), {
        timeoutMs: 20_000,
        what: 'the event on every connection, the new replica included',
      });
      assert.deepEqual(onNew.connection.events(type)[0]!['data'], { scaled: true });
    } finally {
      for (const o of opened) o.connection.close();
    }
  });

  it('Prometheus scrapes every replica of every service and has gw_ metrics', async () => {
    const jobs = Object.fromEntries(gatehouseServices.map((s) => [s, replicas[s]!]));
    const targets = await checkPrometheusTargets(stack.prometheusUrl, { ...jobs, 'push-hub': 3 });
    assert.equal(targets.length, 8, JSON.stringify(targets));
    // The proxied requests of the earlier checks, counted by the proxies and scraped.
    const ok = await waitFor(
      async () => {
        const [value] = await prometheusQuery(
          stack.prometheusUrl,
          'sum(gw_proxy_requests_total{status="ok"})',
        );
        return value !== undefined && value > 0 ? value : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1000, what: 'gw_proxy_requests_total in Prometheus' },
    );
    assert.ok(ok >= 5, `${ok} successful proxied requests`);
  });

  describe('with the optional profiles kafka-tls and schema-registry', () => {
    let kafkaTls: KafkaTlsAccess;
    const everything = { ...replicas, 'kafka-tls': 1, 'schema-registry': 1 };

    before(
      async () => {
        await profilesStarted;
        await stack.waitHealthy({ ...everything, 'push-hub': 3 }, 3 * minutes);
        // A client on the host takes the CA's certificate from the broker's container.
        const ca = await stack.compose(
          ['exec', '-T', 'kafka-tls', 'cat', '/etc/kafka-tls/ca/ca.pem'],
          30_000,
          stack.profilesEnv,
        );
        kafkaTls = { ...stack.kafkaTls, ca };
      },
      { timeout: 10 * minutes },
    );

    it('kafka-tls takes no client but its user over TLS: not plaintext, not without SASL, not a wrong password', async () => {
      await checkKafkaTlsRefusals(kafkaTls);
    });

    it("moved onto them by .env's variables and `up -d`, the services deliver events through Kafka over TLS with SASL", {
      timeout: 10 * minutes,
    }, async () => {
      const switched = performance.now();
      // Each step's time, so that a slow one is seen in the log and not only the test's total.
      const done = (step: string) =>
        process.stderr.write(
          `compose-stack: ${step}: ${((performance.now() - switched) / 1000).toFixed(1)}s\n`,
        );
      // As a user does: the variables of .env.example and `up -d` (here for the services with Kafka
      // clients: the blacklist has none), then the edge reloaded, since nginx resolved the replaced
      // containers' addresses when it started. The old containers stop one by one first, as podman
      // 4.3 needs (docs/deploy.md, "With podman instead of Docker").
      await stack.stopOneByOne(kafkaServices);
      done('old containers stopped');
      await stack.compose(['up', '-d', ...kafkaServices], 5 * minutes, {
        ...stack.profilesEnv,
        ...stack.profileSettings,
      });
      done('up -d onto kafka-tls');
      await stack.waitHealthy(everything, 150_000);
      done('every container healthy');
      // `nginx -s reload` only signals the master: the reload is done when the edge reaches the new
      // hubs (502 from the old addresses until then).
      await stack.reloadEdge(async () => (await fetch(`${stack.urls.publicUrl}/_gw/health`)).ok);
      const seconds = ((performance.now() - switched) / 1000).toFixed(1);
      process.stderr.write(
        `compose-stack: services moved to kafka-tls and healthy, edge reloaded: ${seconds}s\n`,
      );
      for (const service of kafkaServices) {
        for (const c of await stack.containers(service)) {
          const env = (await stack.docker.inspect(c.Id)).Config.Env ?? [];
          for (const [name, value] of Object.entries(stack.profileSettings))
            assert.ok(env.includes(`${name}=${value}`), `${service}: ${name}`);
        }
      }
      await checkEventDelivery(stack.urls);
    });

    it('writes Avro through the schema registry: proxy → Kafka over TLS → publisher → hub, the wire format on the broker', {
      timeout: 5 * minutes,
    }, async () => {
      await checkAvroThroughRegistry(stack.urls, stack.schemaRegistryUrl, kafkaTlsClient(kafkaTls, 'plain'));
    });
  });

  it('docker-compose down -v leaves no container, volume or network of the project', {
    timeout: 7 * minutes,
  }, async () => {
    // With the profiles named, so that their services and volumes go too. The broker's clients
    // stop first: `down` stops a service after those that depend on it, but the services cannot
    // depend on kafka-tls (a service of a profile that may be off), so it would stop alongside them
    // and leave each waiting on its Kafka connections for seconds while it closes.
    const down = performance.now();
    await stack.compose(['stop', ...kafkaServices], 3 * minutes, stack.profilesEnv);
    await stack.compose(['down', '-v'], 3 * minutes, stack.profilesEnv);
    const seconds = ((performance.now() - down) / 1000).toFixed(1);
    process.stderr.write(`compose-stack: docker-compose down -v: ${seconds}s\n`);
    const label = [`com.docker.compose.project=${project}`];
    assert.deepEqual(await stack.containers(), []);
    assert.deepEqual(await stack.docker.volumes(label), []);
    assert.deepEqual(await stack.docker.networks(label), []);
  });
});
