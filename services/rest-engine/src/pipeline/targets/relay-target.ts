/**
 * The relay target (`service: http://host:port`): the request goes to another server; the
 * upstream answer comes back as an EventEnvelope with the response stream as body. The endpoint
 * timeout aborts the upstream request.
 */
import { relay } from '../../http-relay.ts';
import type { Target } from './target.ts';

export const relayTarget: Target = {
  kind: 'relay',
  abortable: true,
  run: (ctx, { endpoint, data, signal }) =>
    relay(endpoint.relay!, {
      method: data.method,
      path: data.url,
      queryString: data.queryString || undefined,
      headers: data.headers,
      session: data.session,
      body: (data.body as Buffer | undefined) ?? data.stream,
      signal: signal!,
      maxBufferBytes: ctx.relayBufferBytes,
    }),
};
