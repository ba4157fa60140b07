// Routing: endpoint urls parsed into segments and looked up in the route table, cases folded A–Z.
export { asciiLowerCase } from './ascii-case.ts';
export { RouteTable } from './route-table.ts';
export { parseUrlPattern, type UrlPattern } from './url-pattern.ts';
