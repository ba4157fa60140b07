// The route table built from the definitions: the endpoint a request reaches, its token check, its target.
export { DefinitionSync } from './definition-sync.ts';
export { JwtGuard } from './jwt-guard.ts';
export type { Route, RouteMatch, RouteTable } from './route-table.ts';
export { upstreamPath } from './upstream-path.ts';
