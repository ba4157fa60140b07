/**
 * Who client i is in a cluster run: its transport, its subscriptions, whether it sends a JWT and
 * which replica it connects to first (block i div 6 of the replicas, round robin). Derived from the index alone, so the orchestrator and every
 * client process agree on it without sending a list of 100,000 clients over IPC.
 */

export type ClusterTransport = 'sse' | 'ws' | 'longpolling';
export const transports: readonly ClusterTransport[] = ['sse', 'ws', 'longpolling'];

export interface ClientMixOptions {
  /** Event types published (`cl.e0` … `cl.e<types-1>`). */
  types: number;
  /** Types each client subscribes to (distinct, ≤ types). */
  subscriptions: number;
  /** Replicas the ordinary clients are spread over (ports[0 … replicas-1]). */
  replicas: number;
}

export interface ClientSpec {
  transport: ClusterTransport;
  /** Indexes of the event types it wants. */
  types: number[];
  jwt: boolean;
  /** Index of the replica it connects to first. */
  home: number;
}

export const eventType = (t: number): string => `cl.e${t}`;
/** Types nobody publishes: the subscriptions of the bystander replica's clients (S4). */
export const unwantedType = (t: number): string => `cl.none${t}`;

export function clientSpec(i: number, o: ClientMixOptions): ClientSpec {
  // Distinct types: i·7 shifts the set, j·step spreads it over the range (j·step < types).
  const step = Math.max(1, Math.floor(o.types / o.subscriptions));
  const types = Array.from({ length: o.subscriptions }, (_, j) => (i * 7 + j * step) % o.types);
  return {
    transport: transports[i % transports.length]!,
    // Half with a JWT, spread over the transports (i % 6 ≥ 3: every transport gets both).
    jwt: i % 6 >= 3,
    types,
    // By blocks of six: every replica gets each transport, with and without a JWT, alike (i mod K
    // would put all of one transport on one replica whenever K is 3).
    home: Math.floor(i / 6) % o.replicas,
  };
}

export function subscriptionsJson(typeNames: string[]): string {
  return JSON.stringify(typeNames.map((eventType) => ({ eventType })));
}

export function connectionPath(
  transport: ClusterTransport,
  typeNames: string[],
  jwt: string | undefined,
): string {
  const query = `subscriptions=${encodeURIComponent(subscriptionsJson(typeNames))}${jwt ? `&jwt=${jwt}` : ''}`;
  return `/_gw/v1/connection/${transport}?${query}`;
}
