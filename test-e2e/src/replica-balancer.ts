/**
 * The load balancer of a test: the replicas it sends new connections to, picked at random. A
 * replica is taken out before it is told to stop and put back once its replacement is ready, as a
 * Kubernetes Service does with the endpoints of a pod that terminates (preStop) and of a new one.
 */
export class ReplicaBalancer {
  private readonly ready = new Set<string>();

  add(url: string): void {
    this.ready.add(url);
  }

  remove(url: string): void {
    this.ready.delete(url);
  }

  readonly pick = (): string | undefined => {
    const urls = [...this.ready];
    return urls.length === 0 ? undefined : urls[Math.floor(Math.random() * urls.length)];
  };
}
