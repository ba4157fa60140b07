/**
 * Preloaded into a proxy process by tests (`NODE_OPTIONS=--import …/fake-dns.ts`) so host names
 * resolve as a test says without touching /etc/hosts: `FAKE_DNS` maps a name to the answers of its
 * successive lookups (`{"flip.test": ["127.0.0.2", "127.0.0.1"]}`: first 127.0.0.2, then 127.0.0.1
 * for ever after), as a DNS server rebinding a name would; an answer may be a list of addresses
 * (`[["127.0.0.2", "127.0.0.1"]]`). Other names resolve as usual. Only
 * dns.lookup changes, the resolver a connect uses, so the proxy's real connect path runs.
 */
import dns from 'node:dns';
import { isIP } from 'node:net';

const answers = JSON.parse(process.env['FAKE_DNS'] ?? '{}') as Record<string, Array<string | string[]>>;
const asked = new Map<string, number>();
const realLookup = dns.lookup;

type Callback = (err: Error | null, address: unknown, family?: number) => void;

function fakeLookup(hostname: string, options: unknown, callback?: Callback): void {
  const done = (typeof options === 'function' ? options : callback) as Callback;
  const list = answers[hostname];
  if (list === undefined || list.length === 0) {
    (realLookup as (...args: unknown[]) => void)(hostname, options, callback);
    return;
  }
  const n = asked.get(hostname) ?? 0;
  asked.set(hostname, n + 1);
  const answer = list[Math.min(n, list.length - 1)]!;
  const addresses = (Array.isArray(answer) ? answer : [answer]).map((a) => ({ address: a, family: isIP(a) }));
  const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
  const [first] = addresses;
  process.nextTick(() => (all ? done(null, addresses) : done(null, first!.address, first!.family)));
}

(dns as { lookup: unknown }).lookup = fakeLookup;
