/**
 * charts/gatehouse installed with helm into a real single-node Kubernetes (tools/k8s-local.sh) as an
 * operator installs it: the image built from the Dockerfile, Kafka, Redis and NATS as pods of the
 * test's own manifests (test-deploy/k8s), the project's nginx edge standing in for an Ingress
 * controller, and the Prometheus operator's ServiceMonitor CRD, so the chart's ServiceMonitors exist.
 * (Debian's Prometheus is built without Kubernetes service discovery, so no Prometheus scrapes the
 * pods here; docker-compose and the process-level e2e test scrape every service.) Everything is
 * checked from outside, on 127.0.0.1 NodePorts: what a user does (user-checks.ts, shared with the compose
 * test), `kubectl rollout restart` of the hub while clients receive events (the chart's probes,
 * preStop and drain move them with nothing lost), `kubectl scale` of the hub without touching the
 * other services, `helm upgrade` rolling
 * every pod, and `helm uninstall` leaving nothing of the release behind.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  eventually,
  ResumingSseClient,
  ResumingWsClient,
  sleep,
  uniqueName,
  waitFor,
} from '@gatehouse/testkit';
import { repoRoot, run } from '../src/run-command.ts';
import { type Cluster, type PodState, startCluster, waitForHttp } from '../src/kubernetes.ts';
import {
  checkClosedByDefault,
  checkEventDelivery,
  checkInternalApiHost,
  checkInternalApiToken,
  checkKafkaRoundTrip,
  checkProxiedHttp,
  checkRestEngine,
  checkSessionKill,
  type GatehouseUrls,
  openSseOnSomeReplica,
  publishEvent,
  userJwt,
} from '../src/user-checks.ts';

const minutes = 60_000;
const release = 'gw';
const instance = `app.kubernetes.io/instance=${release}`;
const components = ['push-hub', 'publisher', 'proxy', 'blacklist', 'rest-engine'];
const kafkaHostListener = ['127.0.0.1:31092'];
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`;
const percentile = (values: number[], p: number) =>
  values.length === 0
    ? Number.NaN
    : [...values].sort((a, b) => a - b)[
        Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)
      ];
const say = (line: string) => process.stderr.write(`helm-release: ${line}\n`);

describe('Helm release in a real Kubernetes cluster, checked from outside', () => {
  let cluster: Cluster;
  let urls: GatehouseUrls;
  const jwtSecretKey = randomBytes(32).toString('hex');
  // TOKEN_SECRET and INTERNAL_API_TOKEN are the chart's own (random, kept across upgrades): read
  // back from its Secret after the install, as an operator does.
  let tokenSecret: string;
  const chartSecret = async (key: string) =>
    Buffer.from(
      await cluster.kubectl(['get', 'secret', `${release}-gatehouse-auth`, '-o', `jsonpath={.data.${key}}`]),
      'base64',
    ).toString();
  const helmInstall = (command: 'install' | 'upgrade', extra: string[] = []) =>
    cluster.helm([
      command,
      release,
      `${repoRoot}charts/gatehouse`,
      '-f',
      `${repoRoot}test-deploy/k8s/values.yaml`,
      '--set',
      `auth.jwtSecretKey=${jwtSecretKey}`,
      ...extra,
      '--wait',
      '--timeout',
      '5m',
    ]);

  before(
    async () => {
      let since = performance.now();
      cluster = await startCluster(uniqueName('gatehouse'));
      say(`cluster up and images loaded in ${seconds(since)}`);
      const crd = (await run(`${repoRoot}tools/chart-tools.sh`, ['servicemonitor-crd'])).trim();
      await cluster.kubectl(['apply', '--server-side', '-f', crd]);
      await cluster.kubectl([
        'create',
        'configmap',
        'gatehouse-edge',
        `--from-file=gatehouse.conf.template=${repoRoot}deploy/nginx/gatehouse.conf.template`,
      ]);
      await cluster.apply('brokers.yaml');
      since = performance.now();
      await cluster.waitDeployments('app in (kafka,redis,nats)');
      say(`Kafka, Redis and NATS ready in ${seconds(since)}`);

      since = performance.now();
      await helmInstall('install');
      say(`helm install --wait: every Deployment ready in ${seconds(since)}`);
      await cluster.apply('edge.yaml');
      await cluster.waitDeployments('app=edge');
      const [publicPort, internalPort, restPort] = await Promise.all([
        cluster.nodePort('edge', 'public'),
        cluster.nodePort('edge', 'internal'),
        cluster.nodePort(`${release}-gatehouse-rest-engine`, 'http'),
      ]);
      tokenSecret = await chartSecret('TOKEN_SECRET');
      assert.match(tokenSecret, /^[A-Za-z0-9]{48}$/, 'the chart generated TOKEN_SECRET');
      urls = {
        publicUrl: `http://127.0.0.1:${publicPort}`,
        internalUrl: `http://127.0.0.1:${internalPort}`,
        restUrl: `http://127.0.0.1:${restPort}`,
        internalToken: await chartSecret('INTERNAL_API_TOKEN'),
        userJwt: userJwt(jwtSecretKey),
      };
      await Promise.all([
        waitForHttp(`${urls.publicUrl}/_gw/health`),
        waitForHttp(`${urls.internalUrl}/health`),
        waitForHttp(`${urls.restUrl}/api/hello/world`),
      ]);
    },
    { timeout: 45 * minutes },
  );

  after(async () => {
    if (!cluster) return;
    await cluster.kubectl(['delete', 'namespace', cluster.namespace, '--wait=false']).catch(() => {});
  });

  it('runs every component from the image as a non-root user, each pod Ready through its probes', async () => {
    // With autoscaling on, the publisher's Deployment starts at 1 replica and its HPA scales it to
    // minReplicas (2) just after install: that pod may still be starting. Wait for it (a restart
    // still fails below).
    let pods = await cluster.pods(instance);
    await waitFor(
      async () => {
        pods = await cluster.pods(instance);
        const publishers = pods.filter((p) => p.component === 'publisher').length;
        return publishers >= 2 && pods.every((p) => p.ready || p.restarts > 0);
      },
      {
        timeoutMs: 3 * minutes,
        intervalMs: 1_000,
        what: 'every pod ready, the publisher at its HPA minimum',
      },
    ).catch(() => {});
    for (const component of components) {
      const mine = pods.filter((p) => p.component === component);
      // The publisher's replicas are the HPA's to set (the next test); the others start with 2.
      assert.ok(mine.length >= (component === 'publisher' ? 1 : 2), `${component}: ${mine.length} pods`);
      const unwell = mine.filter((p) => !p.ready || p.restarts > 0);
      // What each unwell pod is, first (a CI log keeps the start of a message), then the cluster's
      // events about it (a probe that failed, a kill) and the end of its log.
      const logs = await Promise.all(unwell.map((p) => cluster.whyUnwell(p)));
      assert.ok(
        unwell.length === 0,
        `${component}: ${unwell.map((p) => `${p.name} ready=${p.ready} restarts=${p.restarts} last end: ${p.lastEnd ?? 'none'}`).join('; ')}\n${logs.join('\n')}`,
      );
    }
    const uid = await cluster.kubectl([
      'exec',
      pods[0]!.name,
      '--',
      'node',
      '-e',
      'process.stdout.write(process.getuid() + ":" + process.getgid())',
    ]);
    assert.equal(uid, '10001:10001');
    const probes = JSON.parse(
      await cluster.kubectl(['get', 'deployment', `${release}-gatehouse-push-hub`, '-o', 'json']),
    ) as {
      spec: { template: { spec: { containers: Array<Record<string, { httpGet: { path: string } }>> } } };
    };
    const container = probes.spec.template.spec.containers[0]!;
    assert.equal(container['readinessProbe']!.httpGet.path, '/ready');
    assert.equal(container['livenessProbe']!.httpGet.path, '/health');
  });

  it('delivers events over SSE and WebSocket, proxies HTTP and Kafka round trips, serves the REST engine, kills sessions', async () => {
    await checkEventDelivery(urls);
    await checkProxiedHttp(urls, { host: `${release}-gatehouse-rest-engine`, port: 8085 });
    await checkKafkaRoundTrip(urls, kafkaHostListener);
    await checkRestEngine(urls);
    await checkSessionKill(urls, jwtSecretKey);
    await checkClosedByDefault(urls, jwtSecretKey);
    await checkInternalApiHost(urls);
    await checkInternalApiToken(urls);
  });

  it('creates the PDBs, HPA, Ingress rules and ServiceMonitors; the HPA holds its minimum without a metrics API', async () => {
    const objects = await cluster.objects(
      'poddisruptionbudgets.policy,horizontalpodautoscalers.autoscaling,ingresses.networking.k8s.io,servicemonitors.monitoring.coreos.com',
      instance,
    );
    const count = (kind: string) => objects.filter((o) => o.startsWith(`${kind}/`)).length;
    assert.equal(count('poddisruptionbudget.policy'), components.length, objects.join(' '));
    assert.equal(count('servicemonitor.monitoring.coreos.com'), components.length, objects.join(' '));
    assert.equal(count('horizontalpodautoscaler.autoscaling'), 1, objects.join(' '));
    assert.ok(count('ingress.networking.k8s.io') >= 2, objects.join(' '));
    await waitFor(
      async () =>
        (await cluster.pods(`${instance},app.kubernetes.io/component=publisher`)).filter((p) => p.ready)
          .length === 2,
      { timeoutMs: 2 * minutes, intervalMs: 1000, what: 'the HPA to scale the publisher to minReplicas' },
    );
  });

  it('moves every client across kubectl rollout restart of push-hub: nothing lost or doubled, no reconnect refused', async () => {
    const groups = 4;
    const clientCount = 200;
    let published = 0;
    // Posted one after another through the edge, so stream order is n order.
    const publish = async () => {
      const n = published;
      const event = { specversion: '1.0', id: `rollout-${n}`, source: 'helm-test', type: 'greeting' };
      const body = JSON.stringify({ ...event, data: { name: `g${n % groups}`, n } });
      await eventually(async () => {
        const res = await fetch(`${urls.publicUrl}/_gw/v1/events`, {
          method: 'POST',
          headers: {
            'content-type': 'application/cloudevents+json',
            authorization: `Bearer ${urls.userJwt}`,
          },
          body,
        });
        if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
      });
      published++;
    };
    await publish(); // n = 0: the position every client starts after
    const clients = Array.from({ length: clientCount }, (_, i) => {
      const subs = encodeURIComponent(
        JSON.stringify([{ eventType: 'greeting', oneOf: [{ name: `g${i % groups}` }] }]),
      );
      const pick = () => urls.publicUrl;
      // SUBSCRIPTION_CHECK is jwt_validation: every (re)connect names its subscriptions with the user's JWT.
      const query = `subscriptions=${subs}&jwt=${urls.userJwt}`;
      return i % 2 === 0
        ? new ResumingSseClient(pick, `/_gw/v1/connection/sse?${query}`)
        : new ResumingWsClient(pick, `/_gw/v1/connection/ws?${query}`);
    });
    const hubSelector = `${instance},app.kubernetes.io/component=push-hub`;
    const hubsBefore = new Set((await cluster.pods(hubSelector)).map((p) => p.name));
    let publishing = true;
    try {
      for (const c of clients) c.start();
      await waitFor(() => clients.every((c) => c.record.start !== undefined), {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'every client connected',
      });
      const publisher = (async () => {
        while (publishing) {
          await publish();
          await sleep(50);
        }
      })();
      await sleep(2000);
      const since = performance.now();
      await cluster.kubectl(['rollout', 'restart', `deployment/${release}-gatehouse-push-hub`]);
      await waitFor(
        async () => {
          const hubs = await cluster.pods(hubSelector);
          return hubs.length === 2 && hubs.every((p) => p.ready && !p.deleting && !hubsBefore.has(p.name));
        },
        { timeoutMs: 3 * minutes, intervalMs: 500, what: 'the rollout to replace every hub pod' },
      );
      const rolledIn = seconds(since);
      await sleep(3000);
      publishing = false;
      await publisher;
      const last = published - 1;
      const expectedOf = (i: number) => {
        const out: number[] = [];
        for (let n = 1; n <= last; n++) if (n % groups === i % groups) out.push(n);
        return out;
      };
      const lostNow = () =>
        clients.reduce((sum, c, i) => sum + expectedOf(i).filter((n) => !c.record.seen.has(n)).length, 0);
      await waitFor(() => lostNow() === 0, { timeoutMs: 30_000, intervalMs: 500 }).catch(() => {});

      let duplicated = 0;
      for (const c of clients) for (const times of c.record.seen.values()) duplicated += times - 1;
      const refusals = clients.flatMap((c) => c.record.refusals);
      const back = clients.flatMap((c) => c.record.backAfter);
      const moved = clients.filter((c) => c.record.backAfter.length > 0).length;
      const lost = lostNow();
      // Seen once (19 lost, one 503): say which clients missed what, to tell a lost stretch from scattered events.
      for (const [i, c] of clients.entries()) {
        const missing = expectedOf(i).filter((n) => !c.record.seen.has(n));
        if (missing.length === 0) continue;
        say(
          `client ${i} (${i % 2 === 0 ? 'SSE' : 'WebSocket'}) missed ${missing.join(',')}; refusals ` +
            `${c.record.refusals.join(',') || 'none'}, streams ended ${c.record.backAfter.length}, ` +
            `first position ${c.record.start}`,
        );
      }
      say(
        `kubectl rollout restart push-hub (${clientCount} clients through the edge, ${last} events at ~20/s): ` +
          `rolled in ${rolledIn}; lost ${lost}, duplicated ${duplicated}, refused ${refusals.length} ` +
          `(${refusals.join(',') || 'none'}), resyncs ${clients.reduce((s, c) => s + c.record.resyncs, 0)}, ` +
          `clients moved ${moved}, back to receiving p50 ${percentile(back, 50)} ms, p99 ${percentile(back, 99)} ms`,
      );
      assert.equal(lost, 0, 'events lost');
      assert.equal(duplicated, 0, 'events duplicated');
      assert.deepEqual(refusals, [], 'no reconnect refused (429 / 5xx)');
      assert.equal(moved, clientCount, 'every client was moved off its draining pod');
    } finally {
      publishing = false;
      for (const c of clients) c.stop();
    }
  });

  it('scales push-hub to 3 with kubectl: the new replica serves new connections, the other pods stay untouched', async () => {
    const others = async () =>
      (await cluster.pods(instance))
        .filter((p) => p.component !== 'push-hub')
        .map(identity)
        .sort();
    const before = await others();
    const hubsBefore = new Set(
      (await cluster.pods(`${instance},app.kubernetes.io/component=push-hub`)).map((p) => p.name),
    );
    const since = performance.now();
    await cluster.kubectl(['scale', `deployment/${release}-gatehouse-push-hub`, '--replicas=3']);
    await cluster.waitDeployments(`${instance},app.kubernetes.io/component=push-hub`);
    say(`kubectl scale push-hub to 3: ready in ${seconds(since)}`);
    const hubs = await cluster.pods(`${instance},app.kubernetes.io/component=push-hub`);
    const added = hubs.filter((p) => !hubsBefore.has(p.name));
    assert.equal(added.length, 1, JSON.stringify(hubs));

    // kube-proxy spreads new connections over every ready endpoint: one soon lands on the new pod.
    const type = uniqueName('scaled');
    const opened = [];
    let onNew: Awaited<ReturnType<typeof openSseOnSomeReplica>> | undefined;
    try {
      for (let i = 0; i < 30 && !onNew; i++) {
        const conn = await openSseOnSomeReplica(urls, tokenSecret, type);
        opened.push(conn);
        if (conn.replica === added[0]!.name) onNew = conn;
      }
      assert.ok(onNew, `no connection of 30 reached ${added[0]!.name}: ${opened.map((c) => c.replica)}`);
      const id = await publishEvent(urls, type, { scaled: true });
      await waitFor(() => onNew!.connection.events(type).some((e) => e['id'] === id), {
        timeoutMs: 20_000,
        what: 'the event on the new replica',
      });
    } finally {
      for (const c of opened) c.connection.close();
    }
    assert.deepEqual(await others(), before, 'the other services keep their pods, with no restarts');
  });

  it('rolls every pod on helm upgrade with a changed setting, and serves again', async () => {
    const before = new Set((await cluster.pods(instance)).map((p) => p.name));
    const since = performance.now();
    await helmInstall('upgrade', ['--set', 'log.level=debug']);
    await cluster.waitDeployments(instance);
    say(`helm upgrade --wait (log.level changed): every pod replaced in ${seconds(since)}`);
    const after = (await cluster.pods(instance)).filter((p) => !p.deleting);
    assert.ok(after.length >= 10, JSON.stringify(after));
    assert.deepEqual(
      after.filter((p) => before.has(p.name)).map((p) => p.name),
      [],
      'no pod of the old revision is left',
    );
    const env = await cluster.kubectl(['exec', after[0]!.name, '--', 'printenv', 'LOG_LEVEL']);
    assert.equal(env.trim(), 'debug');
    assert.equal(await chartSecret('TOKEN_SECRET'), tokenSecret, 'the generated TOKEN_SECRET is kept');
    assert.equal(await chartSecret('INTERNAL_API_TOKEN'), urls.internalToken, 'and INTERNAL_API_TOKEN');
    await checkEventDelivery(urls);
    await checkInternalApiToken(urls);
  });

  it('leaves nothing of the release behind after helm uninstall', async () => {
    await cluster.helm(['uninstall', release, '--wait', '--timeout', '3m']);
    await waitFor(async () => (await cluster.pods(instance)).length === 0, {
      timeoutMs: 3 * minutes,
      intervalMs: 500,
      what: 'the release pods to terminate',
    });
    const left = await cluster.objects(
      'all,configmaps,secrets,serviceaccounts,poddisruptionbudgets.policy,ingresses.networking.k8s.io,servicemonitors.monitoring.coreos.com,endpointslices.discovery.k8s.io',
      instance,
    );
    assert.deepEqual(left, []);
    assert.equal((await cluster.helm(['list', '-q'])).trim(), '');
  });
});

function identity(p: PodState): string {
  return `${p.name} restarts=${p.restarts}`;
}
