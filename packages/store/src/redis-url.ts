/**
 * Reading a Redis URL that may name several nodes (the seeds of a Redis Cluster):
 * `redis[s]://[user[:password]@]host[:port][,host[:port]…][/db]`. Credentials and the database
 * apply to every node; the port defaults to 6379; `rediss` means TLS.
 */

export interface RedisUrl {
  nodes: Array<{ host: string; port: number }>;
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
  db: number;
}

const pattern = /^(rediss?):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/(\d*))?$/;

export function parseRedisUrl(url: string): RedisUrl {
  const match = pattern.exec(url.trim());
  if (!match) throw new Error(`not a redis URL: ${redact(url)}`);
  const [, scheme, auth, hosts, db] = match;
  const [user, ...secret] = auth === undefined ? [] : auth.split(':');
  return {
    nodes: hosts!.split(',').map((h) => node(h.trim(), url)),
    username: user ? decodeURIComponent(user) : undefined,
    password: secret.length > 0 ? decodeURIComponent(secret.join(':')) : undefined,
    tls: scheme === 'rediss',
    db: db ? Number(db) : 0,
  };
}

function node(text: string, url: string): { host: string; port: number } {
  // [v6 address]:port, host:port or host alone.
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) throw new Error(`not a host[:port] in the redis URL ${redact(url)}: '${text}'`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : 6379 };
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
