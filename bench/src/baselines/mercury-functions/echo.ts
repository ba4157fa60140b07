/**
 * The request echoed as JSON, on the Gatehouse side of mercury.bench.ts: the same fields as the
 * Mercury side's bench/mercury/src/main/java/gatehouse/bench/Echo.java, so both do the same work.
 */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'bench.echo',
  instances: 50,
  handleEvent: (_headers, request) => ({
    method: request.getMethod(),
    url: request.getUrl(),
    headers: request.getHeaders(),
    path_parameters: request.getPathParameters(),
    query: request.getQueryParameters(),
    body: request.getBody(),
  }),
});
