// Endpoints compiled from rest.yaml: authentication, CORS and header sets, timeouts.
export { judgeAuthResult, selectAuthRoute } from './authentication.ts';
export { compileEndpoints } from './endpoint-compiler.ts';
export { describeTimeout } from './endpoint-timeout.ts';
export type { Endpoint, RelayTarget } from './endpoint.ts';
export { type HeaderTransform, transformHeaders } from './header-transform.ts';
