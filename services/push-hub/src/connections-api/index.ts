// The connections API: any replica answers for the cluster, each for the connections it holds.
export { createConnectionsApi } from './connections-api.ts';
export { ConnectionsCluster } from './connections-cluster.ts';
export type { ConnectionsRequest } from './connections-messages.ts';
export { ReplicaConnections } from './replica-connections.ts';
