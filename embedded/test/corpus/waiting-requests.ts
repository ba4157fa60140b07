/**
 * Requests waiting at the public edge for a correlated response, for the `/vN/responses` cases: an
 * endpoint with `response_from: http_async` whose target (a server in the test process) answers
 * 202 and tells the test the correlation id the proxy gave the request (in its query). A case is
 * then sent with an authentic id of a request that waits right now, so that only what the case
 * breaks can be refused, and what the waiting client got shows whether a response was delivered.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Edge path of the waiting requests (`/corpus/wait/<n>`). */
const waitPath = '/corpus/wait/';

export interface WaitAnswer {
  status: number;
  body: string;
}

export interface Wait {
  correlation: string;
  /** What the waiting client got: the response delivered, the proxy's 504, or `aborted`. */
  answer: Promise<WaitAnswer | 'aborted'>;
  /** Ends the client's request (the proxy stops waiting). */
  abort(): void;
}

export interface WaitingRequests {
  /** The API definition that routes the waiting requests to the target here. */
  apiDefinition: Record<string, unknown>;
  /** Opens a waiting request through the edge on `edgePort`; resolves once the target saw it. */
  open(edgePort: number): Promise<Wait>;
  close(): Promise<void>;
}

export async function startWaitingRequests(): Promise<WaitingRequests> {
  const seen = new Map<string, (correlation: string) => void>();
  let next = 0;
  const target = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://target');
    const correlation = url.searchParams.get('correlation');
    const told = seen.get(url.pathname.slice(waitPath.length));
    if (correlation === null || told === undefined) {
      res.writeHead(500).end('not a waiting request of this run');
      return;
    }
    told(correlation);
    // 202: the proxy holds the client's request until the correlated response comes.
    res.writeHead(202).end();
  });
  target.listen(0, '127.0.0.1');
  await once(target, 'listening');
  const port = (target.address() as AddressInfo).port;

  return {
    apiDefinition: {
      id: 'corpus-waiting',
      name: 'corpus-waiting',
      version_data: {
        default: {
          endpoints: [
            {
              id: 'corpus-wait',
              method: 'POST',
              path_regex: `${waitPath}(.*)`,
              response_from: 'http_async',
              // Longer than a case takes (an endless body runs for seconds on a loaded machine).
              response_timeout: 60_000,
            },
          ],
        },
      },
      proxy: { use_env: false, target_url: 'http://127.0.0.1', port },
    },
    async open(edgePort) {
      const key = String(++next);
      const correlation = new Promise<string>((resolve) => seen.set(key, resolve));
      const abort = new AbortController();
      const answer = fetch(`http://127.0.0.1:${edgePort}${waitPath}${key}`, {
        method: 'POST',
        body: '',
        // Past the endpoint's response_timeout (504 then): a bound, should the edge not answer.
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(90_000)]),
      })
        .then(async (res): Promise<WaitAnswer> => ({ status: res.status, body: await res.text() }))
        .catch(() => 'aborted' as const);
      const first = await Promise.race([
        correlation.then((id) => ({ id })),
        answer.then((early) => ({ early })),
      ]);
      seen.delete(key);
      if ('early' in first)
        throw new Error(
          `the waiting request was answered before its target saw it: ${JSON.stringify(first.early)}`,
        );
      return { correlation: first.id, answer, abort: () => abort.abort() };
    },
    async close() {
      target.closeAllConnections();
      await new Promise((resolve) => target.close(resolve));
    },
  };
}
