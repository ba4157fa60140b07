// The HTTP relay: a request forwarded to `service: http://…`, the upstream answer, a failure told.
export { relay } from './http-relay.ts';
export { relayFailure } from './relay-failure.ts';
