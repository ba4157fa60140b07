/** Which target answers an endpoint: the relay for an `http://` service, a flow, else a function. */
import { flowAdapterRoute } from '../../functions/index.ts';
import type { Endpoint } from '../../endpoints/index.ts';
import { flowTarget } from './flow-target.ts';
import { functionTarget } from './function-target.ts';
import { relayTarget } from './relay-target.ts';
import type { Target } from './target.ts';

export function targetOf(endpoint: Endpoint): Target {
  if (endpoint.relay) return relayTarget;
  if (endpoint.primary === flowAdapterRoute) return flowTarget;
  return functionTarget;
}
