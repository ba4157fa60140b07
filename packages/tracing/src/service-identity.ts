/**
 * The service whose spans these are, as its resource names it: `service.name`,
 * `service.instance.id` and `service.version`. startTracing takes it among its options
 * (otel-bootstrap.ts) and the SDK it loads only when tracing is on makes the resource of it
 * (otel-sdk.ts); a file of its own, so the SDK needs nothing from the file that loads it.
 */
export interface ServiceIdentity {
  serviceName: string;
  /** `service.instance.id`: the replica id (REPLICA_ID or host name + random suffix). */
  serviceInstanceId?: string;
  serviceVersion?: string;
}
