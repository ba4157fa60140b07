/**
 * docker-compose.yml run the way users run it: tools/containers.sh provides the images and a Docker
 * API (podman's, DOCKER_HOST), docker-compose starts the project with secrets and choices of its own (closed: the checks jwt_validation, an internal API token) and its
 * host ports on free ports of this machine (the GATEHOUSE_*_PORT variables), and `destroy` removes
 * everything again. The test talks to the stack only through the published 127.0.0.1 ports; the
 * Docker API is used for what an operator sees (containers, health, volumes, networks).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@gatehouse/testkit';
import { type ContainerSummary, DockerApi } from './docker-api.ts';
import { deploymentAudience, deploymentIssuer, type GatehouseUrls, userJwt } from './user-checks.ts';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const containersScript = `${repoRoot}tools/containers.sh`;

export interface ComposeStack {
  readonly project: string;
  /** The environment docker-compose runs with (DOCKER_HOST, ports, secrets, project name). */
  readonly env: NodeJS.ProcessEnv;
  readonly urls: GatehouseUrls;
  readonly prometheusUrl: string;
  /** The Kafka listener for clients on the host (advertised as 127.0.0.1:<port>). */
  readonly kafkaBrokers: string[];
  readonly jwtSecretKey: string;
  readonly tokenSecret: string;
  readonly docker: DockerApi;
  /** Runs `docker-compose <args>` for the project; resolves with its stdout, rejects on failure. */
  compose(args: string[], timeoutMs?: number): Promise<string>;
  /** The project's containers, of one service or all. */
  containers(service?: string): Promise<ContainerSummary[]>;
  /** Until each service has its number of containers, all running and healthy (if checked). */
  waitHealthy(replicas: Record<string, number>, timeoutMs: number): Promise<void>;
  /** tools/containers.sh down: docker-compose down -v, leftovers by label, the API service. */
  destroy(): Promise<void>;
}

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Pass the command's stderr through (progress and timings of long stages). */
  showProgress?: boolean;
}

/** Runs a command to completion; rejects with its output when it fails or outlives `timeoutMs`. */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<string> {
  const { env = process.env, timeoutMs = 120_000, showProgress = false } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      if (showProgress) process.stderr.write(c);
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `${command} ${args.join(' ')} ended with ${code ?? signal}:\n${stdout}\n${stderr}`.trim(),
          ),
        );
    });
  });
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
  const ports = {
    public: await freePort(),
    internal: await freePort(),
    rest: await freePort(),
    kafka: await freePort(),
    prometheus: await freePort(),
  };
  const jwtSecretKey = randomBytes(32).toString('hex');
  const tokenSecret = randomBytes(32).toString('hex');
  const internalToken = randomBytes(32).toString('hex');
  // Everything docker-compose.yml asks for, chosen as an operator closing the stack would.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...containersEnv,
    COMPOSE_PROJECT_NAME: project,
    GATEHOUSE_PUBLIC_PORT: String(ports.public),
    GATEHOUSE_INTERNAL_PORT: String(ports.internal),
    GATEHOUSE_REST_PORT: String(ports.rest),
    GATEHOUSE_KAFKA_PORT: String(ports.kafka),
    GATEHOUSE_PROMETHEUS_PORT: String(ports.prometheus),
    JWT_SECRET_KEY: jwtSecretKey,
    TOKEN_SECRET: tokenSecret,
    INTERNAL_API_TOKEN: internalToken,
    SUBMISSION_CHECK: 'jwt_validation',
    SUBSCRIPTION_CHECK: 'jwt_validation',
    JWT_ISSUER: deploymentIssuer,
    JWT_AUDIENCE: deploymentAudience,
  };
  const docker = DockerApi.fromDockerHost(env['DOCKER_HOST']!);
  const projectLabel = `com.docker.compose.project=${project}`;
  const compose = (args: string[], timeoutMs = 300_000) =>
    run('docker-compose', ['-f', `${repoRoot}docker-compose.yml`, ...args], { env, timeoutMs });
  const containers = (service?: string) =>
    docker.containers(service ? [projectLabel, `com.docker.compose.service=${service}`] : [projectLabel]);

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
    jwtSecretKey,
    tokenSecret,
    docker,
    compose,
    containers,
    async waitHealthy(replicas, timeoutMs) {
      let seen = '';
      await waitFor(
        async () => {
          const states = await Promise.all((await containers()).map((c) => docker.inspect(c.Id)));
          seen = states
            .map((s) => `${s.Name} ${s.State.Status} ${s.State.Health?.Status ?? '-'}`)
            .sort()
            .join('\n');
          return Object.entries(replicas).every(([service, count]) => {
            const mine = states.filter((s) => s.Config.Labels['com.docker.compose.service'] === service);
            return (
              mine.length === count &&
              mine.every((s) => s.State.Running && (s.State.Health?.Status ?? 'healthy') === 'healthy')
            );
          });
        },
        { timeoutMs, intervalMs: 1000, what: 'every container running and healthy' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; containers:\n${seen}`);
      });
    },
    async destroy() {
      await run(containersScript, ['down'], { env, timeoutMs: 180_000 });
    },
  };
}
