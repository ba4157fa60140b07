/**
 * docker-compose.yml run the way users run it: tools/containers.sh provides the images and a Docker
 * API (podman's, DOCKER_HOST), docker-compose starts the project with secrets and choices of its own (closed: the checks jwt_validation, an internal API token) and its
 * host ports on free ports of this machine (the GATEHOUSE_*_PORT variables), and `destroy` removes
 * everything again, the optional profiles' services and volumes included. The test talks to the
 * stack only through the published 127.0.0.1 ports; the Docker API is used for what an operator sees
 * (containers, health, volumes, networks).
 */
import { randomBytes } from 'node:crypto';
import { freePorts, waitFor } from '@gatehouse/testkit';
import { type ContainerSummary, DockerApi } from './docker-api.ts';
import { repoRoot, run } from './run-command.ts';
import { deploymentAudience, deploymentIssuer, type GatehouseUrls, userJwt } from './user-checks.ts';

const containersScript = `${repoRoot}tools/containers.sh`;

/** docker-compose.yml's optional profiles. */
export const optionalProfiles = ['kafka-tls', 'schema-registry'];
/** What docker-compose.yml reads to turn the profiles on and the services onto other brokers. */
const profileVariables = [
  'COMPOSE_PROFILES',
  'KAFKA_BROKERS',
  'KAFKA_SASL',
  'KAFKA_SSL_ENABLED',
  'KAFKA_SSL_CA_CERTFILE',
  'KAFKA_SSL_CERTFILE',
  'KAFKA_SSL_KEYFILE',
  'KAFKA_SSL_KEYFILE_PASS',
  'KAFKA_SSL_PINNED_SHA256',
  'KAFKA_SCHEMA_REGISTRY_HOST',
  'KAFKA_SCHEMA_REGISTRY_BASIC_AUTH',
  'KAFKA_SCHEMA_REGISTRY_CA_FILE',
  'KAFKA_SCHEMA_REGISTRY_CERT_FILE',
  'KAFKA_SCHEMA_REGISTRY_KEY_FILE',
  'KAFKA_TLS_USER',
  'GATEHOUSE_TLS_DIR',
];
/** The SASL user of the kafka-tls broker (KAFKA_TLS_USER's default). */
const kafkaTlsUser = 'gatehouse';

export interface ComposeStack {
  readonly project: string;
  /** The environment docker-compose runs with (DOCKER_HOST, ports, secrets, project name). */
  readonly env: NodeJS.ProcessEnv;
  readonly urls: GatehouseUrls;
  readonly prometheusUrl: string;
  /** The Kafka listener for clients on the host (advertised as 127.0.0.1:<port>). */
  readonly kafkaBrokers: string[];
  /**
   * The kafka-tls profile's broker: its listener for clients on the host (SASL_SSL, advertised as
   * 127.0.0.1:<port>) and its SASL user (KAFKA_TLS_USER) and password (KAFKA_TLS_PASSWORD).
   */
  readonly kafkaTls: { brokers: string[]; user: string; password: string };
  /** The schema-registry profile's Confluent-compatible API, published on the host. */
  readonly schemaRegistryUrl: string;
  /** COMPOSE_PROFILES naming every optional profile, as .env.example shows it. */
  readonly profilesEnv: NodeJS.ProcessEnv;
  /**
   * What .env.example tells a user to set to move the services to the profiles' broker and
   * registry (with profilesEnv): KAFKA_BROKERS, KAFKA_SASL, KAFKA_SSL_CA_CERTFILE and
   * KAFKA_SCHEMA_REGISTRY_HOST.
   */
  readonly profileSettings: NodeJS.ProcessEnv;
  readonly jwtSecretKey: string;
  readonly tokenSecret: string;
  readonly docker: DockerApi;
  /**
   * Runs `docker-compose <args>` for the project, with `extraEnv` on top of its environment (e.g.
   * profilesEnv); resolves with its stdout, rejects on failure.
   */
  compose(args: string[], timeoutMs?: number, extraEnv?: NodeJS.ProcessEnv): Promise<string>;
  /** The project's containers, of one service or all. */
  containers(service?: string): Promise<ContainerSummary[]>;
  /**
   * Reloads the edge's nginx once its configuration loads. nginx resolves its upstream names when
   * it loads the configuration; a name the network does not resolve yet (or no longer: podman 4.3,
   * see `stopOneByOne`) fails the reload, which nginx only logs ([emerg] host not found in
   * upstream) before going on with the old addresses. So `nginx -t` is run until it passes first.
   * With `reached`, the reload is made again every 10 s until it holds (at most 90 s): podman's
   * name server can answer the test and fail the reload's own look-up a moment later.
   */
  reloadEdge(reached?: () => Promise<boolean>): Promise<void>;
  /**
   * Stops the services' containers one after the other. podman 4.3's netavark (Debian 12) edits a
   * network's table of names without a lock when a container stops, so several stopping at once
   * (compose replacing a service's containers) can lose the table: every name stops resolving on
   * the network (seen here: `aardvark pid not found` in podman's log, the new containers never
   * ready). Docker is not affected.
   */
  stopOneByOne(services: string[]): Promise<void>;
  /** Until each service has its number of containers, all running and healthy (if checked). */
  waitHealthy(replicas: Record<string, number>, timeoutMs: number): Promise<void>;
  /**
   * tools/containers.sh down with every optional profile on: docker-compose down -v, leftovers by
   * label, the API service.
   */
  destroy(): Promise<void>;
}

/** Images built (cached), podman's Docker API running; the variables to reach it. */
export async function prepareContainers(timeoutMs: number): Promise<NodeJS.ProcessEnv> {
  await run(containersScript, ['up'], { timeoutMs, showProgress: true });
  const exports = await run(containersScript, ['env']);
  const env: NodeJS.ProcessEnv = {};
  for (const line of exports.split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  if (!env['DOCKER_HOST']) throw new Error(`no DOCKER_HOST from tools/containers.sh env:\n${exports}`);
  return env;
}

export async function startComposeStack(
  project: string,
  containersEnv: NodeJS.ProcessEnv,
): Promise<ComposeStack> {
  const [publicPort, internal, rest, kafka, prometheus, kafkaTls, schemaRegistry] = await freePorts(7);
  const ports = {
    public: publicPort!,
    internal: internal!,
    rest: rest!,
    kafka: kafka!,
    prometheus: prometheus!,
    kafkaTls: kafkaTls!,
    schemaRegistry: schemaRegistry!,
  };
  const jwtSecretKey = randomBytes(32).toString('hex');
  const tokenSecret = randomBytes(32).toString('hex');
  const internalToken = randomBytes(32).toString('hex');
  const kafkaTlsPassword = randomBytes(32).toString('hex');
  // Everything docker-compose.yml asks for, chosen as an operator closing the stack would.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The profiles and the services' broker and registry settings are the test's to choose: empty
    // (unset, for docker-compose.yml) whatever the caller's environment or an .env file says.
    ...Object.fromEntries(profileVariables.map((name) => [name, ''])),
    ...containersEnv,
    COMPOSE_PROJECT_NAME: project,
    GATEHOUSE_PUBLIC_PORT: String(ports.public),
    GATEHOUSE_INTERNAL_PORT: String(ports.internal),
    GATEHOUSE_REST_PORT: String(ports.rest),
    GATEHOUSE_KAFKA_PORT: String(ports.kafka),
    GATEHOUSE_PROMETHEUS_PORT: String(ports.prometheus),
    GATEHOUSE_KAFKA_TLS_PORT: String(ports.kafkaTls),
    GATEHOUSE_SCHEMA_REGISTRY_PORT: String(ports.schemaRegistry),
    JWT_SECRET_KEY: jwtSecretKey,
    TOKEN_SECRET: tokenSecret,
    INTERNAL_API_TOKEN: internalToken,
    SUBMISSION_CHECK: 'jwt_validation',
    SUBSCRIPTION_CHECK: 'jwt_validation',
    JWT_ISSUER: deploymentIssuer,
    JWT_AUDIENCE: deploymentAudience,
    // The example app the image carries: the checks call its functions (user-checks.ts). Without
    // it the REST engine serves no endpoints of its own.
    REST_CONFIG_FOLDER: '/app/examples/rest-app/dist',
    // Read by the kafka-tls profile's broker only: the default stack does not use it.
    KAFKA_TLS_PASSWORD: kafkaTlsPassword,
  };
  const profilesEnv = { COMPOSE_PROFILES: optionalProfiles.join(',') };
  const docker = DockerApi.fromDockerHost(env['DOCKER_HOST']!);
  const projectLabel = `com.docker.compose.project=${project}`;
  // One docker-compose at a time: two at once on one project set up and tear down containers on
  // its network at once, which podman 4.3's netavark does not survive (see `stopOneByOne`).
  let composing: Promise<unknown> = Promise.resolve();
  const compose = (args: string[], timeoutMs = 300_000, extraEnv: NodeJS.ProcessEnv = {}) => {
    const result = composing.then(() =>
      run('docker-compose', ['-f', `${repoRoot}docker-compose.yml`, ...args], {
        env: { ...env, ...extraEnv },
        timeoutMs,
      }),
    );
    composing = result.catch(() => {});
    return result;
  };
  const containers = (service?: string) =>
    docker.containers(service ? [projectLabel, `com.docker.compose.service=${service}`] : [projectLabel]);
  const reloadOnce = async () => {
    // A refusal rejects the probe: waitFor's time-out then says what nginx printed last.
    await waitFor(() => compose(['exec', '-T', 'edge', 'nginx', '-t', '-q'], 30_000).then(() => true), {
      timeoutMs: 90_000,
      intervalMs: 1000,
      what: "the edge's configuration to load (nginx -t)",
    });
    await compose(['exec', '-T', 'edge', 'nginx', '-s', 'reload'], 30_000);
  };
  const reloadEdge = async (reached?: () => Promise<boolean>) => {
    await reloadOnce();
    if (reached === undefined) return;
    let reloadedAt = performance.now();
    await waitFor(
      async () => {
        if (await reached().catch(() => false)) return true;
        if (performance.now() - reloadedAt > 10_000) {
          await reloadOnce();
          reloadedAt = performance.now();
        }
        return false;
      },
      { timeoutMs: 90_000, intervalMs: 200, what: 'the reloaded edge reaching the new containers' },
    );
  };

  return {
    project,
    env,
    urls: {
      publicUrl: `http://127.0.0.1:${ports.public}`,
      internalUrl: `http://127.0.0.1:${ports.internal}`,
      restUrl: `http://127.0.0.1:${ports.rest}`,
      internalToken,
      userJwt: userJwt(jwtSecretKey),
    },
    prometheusUrl: `http://127.0.0.1:${ports.prometheus}`,
    kafkaBrokers: [`127.0.0.1:${ports.kafka}`],
    kafkaTls: { brokers: [`127.0.0.1:${ports.kafkaTls}`], user: kafkaTlsUser, password: kafkaTlsPassword },
    schemaRegistryUrl: `http://127.0.0.1:${ports.schemaRegistry}/apis/ccompat/v7`,
    profilesEnv,
    profileSettings: {
      KAFKA_BROKERS: 'kafka-tls:9093',
      KAFKA_SASL: `scram-sha-512:${kafkaTlsUser}:${kafkaTlsPassword}`,
      KAFKA_SSL_CA_CERTFILE: '/etc/gatehouse/tls/ca.pem',
      KAFKA_SCHEMA_REGISTRY_HOST: 'http://schema-registry:8080/apis/ccompat/v7',
    },
    jwtSecretKey,
    tokenSecret,
    docker,
    compose,
    reloadEdge,
    containers,
    async stopOneByOne(services) {
      for (const service of services)
        for (const c of await containers(service)) if (c.State === 'running') await docker.stop(c.Id, 30);
    },
    async waitHealthy(replicas, timeoutMs) {
      let seen = '';
      let waiting: string[] = [];
      await waitFor(
        async () => {
          const states = await Promise.all((await containers()).map((c) => docker.inspect(c.Id)));
          seen = states
            .map((s) => `${s.Name} ${s.State.Status} ${s.State.Health?.Status ?? '-'}`)
            .sort()
            .join('\n');
          waiting = Object.entries(replicas)
            .filter(([service, count]) => {
              const mine = states.filter((s) => s.Config.Labels['com.docker.compose.service'] === service);
              return !(
                mine.length === count &&
                mine.every((s) => s.State.Running && (s.State.Health?.Status ?? 'healthy') === 'healthy')
              );
            })
            .map(([service]) => service);
          return waiting.length === 0;
        },
        { timeoutMs, intervalMs: 1000, what: 'every container running and healthy' },
      ).catch(async (err: Error) => {
        // What the services still waited for said last.
        const logs = await compose(['logs', '--no-color', '--tail=15', ...waiting], 30_000).catch(
          (e: Error) => e.message,
        );
        throw new Error(`${err.message}; containers:\n${seen}\nlogs of ${waiting.join(', ')}:\n${logs}`);
      });
    },
    async destroy() {
      await composing;
      await run(containersScript, ['down'], { env: { ...env, ...profilesEnv }, timeoutMs: 180_000 });
    },
  };
}
