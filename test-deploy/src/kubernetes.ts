/**
 * The local Kubernetes cluster of tools/k8s-local.sh, driven the way an operator drives a cluster:
 * kubectl and helm with the cluster's kubeconfig, images loaded from the archives that
 * tools/containers.sh saves (nothing is pulled), NodePorts on 127.0.0.1 for clients.
 */
import { readdir } from 'node:fs/promises';
import { waitFor } from '@gatehouse/testkit';
import { repoRoot, run } from './run-command.ts';

const clusterScript = `${repoRoot}tools/k8s-local.sh`;
const containersScript = `${repoRoot}tools/containers.sh`;

export interface PodState {
  name: string;
  component: string | undefined;
  ready: boolean;
  restarts: number;
  deleting: boolean;
  /** How its container last ended, for a pod that restarted: "Error (exit 1)", "OOMKilled (exit 137)". */
  lastEnd: string | undefined;
}

export interface Cluster {
  readonly namespace: string;
  kubectl(args: string[], options?: { timeoutMs?: number; input?: string }): Promise<string>;
  helm(args: string[], timeoutMs?: number): Promise<string>;
  /** Applies a manifest file of test-deploy/k8s in the namespace. */
  apply(file: string): Promise<void>;
  /** The pods matching a label selector. */
  pods(selector: string): Promise<PodState[]>;
  /**
   * Why a pod is not ready or restarted, for a test's failure message: the cluster's events about
   * it (a probe that failed and how, a kill, an image not found), then the end of the log its
   * container left when it last ended, or of its log now when it never ended.
   */
  whyUnwell(pod: PodState): Promise<string>;
  /** Until every Deployment matching `selector` has all its replicas updated, ready and alone. */
  waitDeployments(selector: string, timeoutMs?: number): Promise<void>;
  /** The node port a Service exposes for its port `portName`. */
  nodePort(service: string, portName: string): Promise<number>;
  /** The names of the objects of `kinds` with the label selector, as `kind/name`. */
  objects(kinds: string, selector: string): Promise<string[]>;
}

/** Starts the cluster (or finds it running) and loads every image the project built into it. */
export async function startCluster(namespace: string): Promise<Cluster> {
  await run(clusterScript, ['up'], { timeoutMs: 30 * 60_000, showProgress: true });
  const env = { ...process.env, ...exportsOf(await run(clusterScript, ['env'])) };
  env['HELM_CACHE_HOME'] = `${repoRoot}.cache/helm/cache`;
  env['HELM_CONFIG_HOME'] = `${repoRoot}.cache/helm/config`;
  env['HELM_DATA_HOME'] = `${repoRoot}.cache/helm/data`;
  const helmBin = `${(await run(`${repoRoot}tools/chart-tools.sh`, ['chart'], { timeoutMs: 20 * 60_000 })).trim()}/helm`;
  await loadImages();

  const kubectl: Cluster['kubectl'] = (args, options = {}) =>
    runWithInput('kubectl', ['-n', namespace, ...args], env, options);
  const cluster: Cluster = {
    namespace,
    kubectl,
    helm: (args, timeoutMs = 10 * 60_000) => run(helmBin, ['-n', namespace, ...args], { env, timeoutMs }),
    async apply(file) {
      await kubectl(['apply', '-f', `${repoRoot}test-deploy/k8s/${file}`]);
    },
    async pods(selector) {
      const list = JSON.parse(await kubectl(['get', 'pods', '-l', selector, '-o', 'json'])) as PodList;
      return list.items.map(podState);
    },
    async whyUnwell(pod) {
      const events = await kubectl([
        'get',
        'events',
        '--field-selector',
        `involvedObject.name=${pod.name}`,
        '--sort-by=.lastTimestamp',
        '-o',
        'custom-columns=COUNT:.count,REASON:.reason,MESSAGE:.message',
        '--no-headers',
      ]).catch(String);
      const log = await kubectl([
        'logs',
        pod.name,
        ...(pod.restarts > 0 ? ['--previous'] : []),
        '--tail=20',
      ]).catch(String);
      const lines = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((line) => `  ${line}`);
      return [
        `${pod.name}: its events`,
        ...lines(events),
        `${pod.name}: the end of its log`,
        ...lines(log),
      ].join('\n');
    },
    async waitDeployments(selector, timeoutMs = 5 * 60_000) {
      let last = '';
      await waitFor(
        async () => {
          const list = JSON.parse(
            await kubectl(['get', 'deployments', '-l', selector, '-o', 'json']),
          ) as DeploymentList;
          last = list.items.map(describeRollout).join('; ');
          return list.items.length > 0 && list.items.every(rolledOut);
        },
        { timeoutMs, intervalMs: 500, what: `deployments ${selector} rolled out` },
      ).catch((err: Error) => {
        throw new Error(`${err.message}: ${last}`);
      });
    },
    async nodePort(service, portName) {
      const text = await kubectl([
        'get',
        'service',
        service,
        '-o',
        `jsonpath={.spec.ports[?(@.name=="${portName}")].nodePort}`,
      ]);
      const port = Number(text);
      if (!Number.isInteger(port) || port <= 0) throw new Error(`no node port ${portName} on ${service}`);
      return port;
    },
    async objects(kinds, selector) {
      const text = await kubectl(['get', kinds, '-l', selector, '-o', 'name', '--ignore-not-found']);
      return text.split('\n').filter(Boolean);
    },
  };
  await kubectl(['get', 'namespace', namespace], {}).catch(() =>
    runWithInput('kubectl', ['create', 'namespace', namespace], env, {}),
  );
  return cluster;
}

/** Waits until `url` answers at all (kube-proxy needs a moment after endpoints become ready). */
export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    () =>
      fetch(url, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs, intervalMs: 250, what: `${url} to answer` },
  );
}

/** tools/containers.sh builds and saves every image as a docker-archive; the cluster imports them all. */
async function loadImages(): Promise<void> {
  // The stand-ins of the public images and the Gatehouse image of this checkout (rebuilt when the
  // sources changed), as the compose test has them.
  await run(containersScript, ['bases'], { timeoutMs: 20 * 60_000, showProgress: true });
  await run(containersScript, ['build'], { timeoutMs: 20 * 60_000, showProgress: true });
  await run(containersScript, ['save'], { timeoutMs: 20 * 60_000, showProgress: true });
  const dir = `${repoRoot}.cache/images/archives`;
  const archives = (await readdir(dir)).filter((f) => f.endsWith('.tar')).map((f) => `${dir}/${f}`);
  await run(clusterScript, ['load-image', ...archives], { timeoutMs: 10 * 60_000 });
}

function exportsOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^export ([A-Z_]+)=["']?(.*?)["']?$/.exec(line);
    if (m) env[m[1]!] = m[2]!.replace(/\$PATH|\$\{PATH\}/, process.env['PATH'] ?? '');
  }
  if (!env['KUBECONFIG']) throw new Error(`no KUBECONFIG from tools/k8s-local.sh env:\n${text}`);
  return env;
}

function runWithInput(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { timeoutMs?: number; input?: string },
): Promise<string> {
  if (options.input === undefined) return run(command, args, { env, timeoutMs: options.timeoutMs });
  return run('sh', ['-c', `printf '%s' "$INPUT" | "$@"`, 'sh', command, ...args], {
    env: { ...env, INPUT: options.input },
    timeoutMs: options.timeoutMs,
  });
}

interface PodList {
  items: Array<{
    metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
    status: {
      conditions?: Array<{ type: string; status: string }>;
      containerStatuses?: Array<{
        restartCount: number;
        lastState?: { terminated?: { reason?: string; exitCode?: number; finishedAt?: string } };
      }>;
    };
  }>;
}

function podState(pod: PodList['items'][number]): PodState {
  return {
    name: pod.metadata.name,
    component: pod.metadata.labels?.['app.kubernetes.io/component'],
    ready: pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    restarts: (pod.status.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
    deleting: pod.metadata.deletionTimestamp !== undefined,
    lastEnd: lastEnd(pod.status.containerStatuses ?? []),
  };
}

function lastEnd(statuses: NonNullable<PodList['items'][number]['status']['containerStatuses']>) {
  const ended = statuses.map((c) => c.lastState?.terminated).find((t) => t !== undefined);
  return ended && `${ended.reason ?? 'terminated'} (exit ${ended.exitCode}) at ${ended.finishedAt}`;
}

interface DeploymentList {
  items: Array<{
    metadata: { name: string; generation: number };
    spec: { replicas?: number };
    status: {
      observedGeneration?: number;
      replicas?: number;
      updatedReplicas?: number;
      readyReplicas?: number;
      availableReplicas?: number;
    };
  }>;
}

function rolledOut(d: DeploymentList['items'][number]): boolean {
  const want = d.spec.replicas ?? 1;
  const s = d.status;
  return (
    (s.observedGeneration ?? 0) >= d.metadata.generation &&
    s.updatedReplicas === want &&
    s.readyReplicas === want &&
    s.availableReplicas === want &&
    s.replicas === want
  );
}

function describeRollout(d: DeploymentList['items'][number]): string {
  const s = d.status;
  return `${d.metadata.name} ${s.readyReplicas ?? 0}/${d.spec.replicas ?? 1} ready, ${s.updatedReplicas ?? 0} updated, ${s.replicas ?? 0} in all`;
}
