/**
 * The relay target (`service: http://host:port`): the request goes to another server; the
 * upstream answer comes back as an EventEnvelope with the response stream as body. The endpoint
 * timeout aborts the upstream request. An upstream that fails is a 502 or 504 with a fixed message,
 * its cause logged (relay-failure.ts).
 */
import { AppException, isAppException } from '@gatehouse/functions';
import { relay, relayFailure } from '../../relay/index.ts';
import type { PipelineContext } from '../pipeline-context.ts';
import type { Target, TargetCall } from './target.ts';

export const relayTarget: Target = {
  kind: 'relay',
  abortable: true,
  run: (ctx, call) => {
    const { endpoint, data, signal } = call;
    return relay(endpoint.relay!, {
      method: data.method,
      path: data.url,
      queryString: data.queryString || undefined,
      headers: data.headers,
      session: data.session,
      body: (data.body as Buffer | undefined) ?? data.stream,
      signal: signal!,
      maxBufferBytes: ctx.relayBufferBytes,
    }).catch((err: unknown) => {
      throw failed(ctx, call, err);
    });
  },
};

function failed(ctx: PipelineContext, { endpoint, signal }: TargetCall, err: unknown): unknown {
  // Our own refusal, or aborted because the endpoint timed out or the client left: answered already.
  if (isAppException(err) || signal?.aborted) return err;
  const { status, message } = relayFailure(err);
  ctx.logger.warn(
    { err, upstream: endpoint.relay!.origin.origin, endpoint: endpoint.label, status },
    'relay failed',
  );
  return new AppException(status, message);
}
