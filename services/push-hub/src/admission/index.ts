// What a connect carries, and the gate every new connection passes, cheapest check first.
export { type ConnectRequest, fromParams, queryOf, readConnectRequest } from './connect-request.ts';
export {
  type AdmittedConnect,
  type ConnectionGate,
  createConnectionGate,
  handshakeRefusal,
  takePlace,
} from './connection-gate.ts';
export { createReconnectCheck, type ReconnectCheck } from './reconnect-evidence.ts';
export { createStreamAhead } from './stream-ahead.ts';
export { type ConnectHook, createConnectHook } from './connect-hook.ts';
export { connectHookFrom } from './connect-hook-setup.ts';
export { keepGranted } from './connect-grant.ts';
