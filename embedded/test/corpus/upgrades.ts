/**
 * Upgrade requests the edge refuses on the raw socket (no route, a path that cannot be made
 * canonical, an oversized header, a proxied target that is not there), each followed by a reset
 * from the client: node:http stops watching a socket once it hands an upgrade over, so an error on
 * it that nobody heard ended the process.
 */
import { type CorpusCase, head } from './corpus-case.ts';

const upgrade = {
  upgrade: 'websocket',
  connection: 'Upgrade',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

function refusedUpgrade(name: string, path: string, statuses: number[], extra: Record<string, string> = {}) {
  return {
    kind: 'http',
    name,
    via: 'edge',
    head: head(`GET ${path} HTTP/1.1`, { ...upgrade, ...extra }),
    statuses,
    reset: true,
  } satisfies CorpusCase;
}

export const upgradeCases: CorpusCase[] = [
  refusedUpgrade('an upgrade no service takes, then a reset', '/no-such-path', [404]),
  refusedUpgrade('an upgrade to the health path, then a reset', '/_gw/health', [404]),
  refusedUpgrade('an upgrade of a path with an encoded slash, then a reset', '/a%2Fb', [400]),
  refusedUpgrade('an upgrade with an oversized header, then a reset', '/no-such-path', [431], {
    'x-big': 'a'.repeat(20_000),
  }),
  refusedUpgrade(
    'an upgrade the proxy takes to a REST path, then a reset',
    '/api/hello/world',
    [400, 404, 502],
  ),
];
