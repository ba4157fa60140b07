/**
 * The few Docker Engine API calls the compose test makes, over DOCKER_HOST's unix socket (podman's
 * `system service` here, Docker's daemon elsewhere): what docker-compose created, by its labels,
 * and each container's state and health.
 */
import { request } from 'node:http';

export interface ContainerSummary {
  Id: string;
  Names: string[];
  State: string;
  Labels: Record<string, string>;
}

export interface ContainerDetails {
  Id: string;
  Name: string;
  Config: {
    User: string;
    Hostname: string;
    Cmd: string[] | null;
    Env: string[] | null;
    Labels: Record<string, string>;
  };
  State: { Status: string; Running: boolean; Pid: number; Health?: { Status: string } };
}

export class DockerApi {
  readonly socketPath: string;

  constructor(socketPath: string) {
    this.socketPath = socketPath;
  }

  static fromDockerHost(dockerHost: string): DockerApi {
    if (!dockerHost.startsWith('unix://')) throw new Error(`DOCKER_HOST ${dockerHost} is not a unix socket`);
    return new DockerApi(dockerHost.slice('unix://'.length));
  }

  get<T>(path: string): Promise<T> {
    return this.call('GET', path, 30_000).then((body) => JSON.parse(body) as T);
  }

  private call(method: 'GET' | 'POST', path: string, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: this.socketPath, path, method, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const ok = res.statusCode! >= 200 && res.statusCode! < 300;
          // 304 to a stop: the container was not running.
          if (ok || res.statusCode === 304) resolve(body);
          else reject(new Error(`${method} ${path}: ${res.statusCode} ${body}`));
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** Stops a container as `docker stop -t <seconds>` does; resolves once it has stopped. */
  async stop(id: string, seconds: number): Promise<void> {
    await this.call('POST', `/containers/${id}/stop?t=${seconds}`, (seconds + 30) * 1000);
  }

  /** Containers (running or not) carrying every given label (`key=value`). */
  containers(labels: string[]): Promise<ContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return this.get(`/containers/json?all=1&filters=${filters}`);
  }

  inspect(id: string): Promise<ContainerDetails> {
    return this.get(`/containers/${id}/json`);
  }

  async volumes(labels: string[]): Promise<Array<{ Name: string }>> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return (
      (await this.get<{ Volumes: Array<{ Name: string }> | null }>(`/volumes?filters=${filters}`)).Volumes ??
      []
    );
  }

  networks(labels: string[]): Promise<Array<{ Name: string }>> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return this.get(`/networks?filters=${filters}`);
  }
}
