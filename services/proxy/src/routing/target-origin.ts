/**
 * Where an API's HTTP endpoints forward to: `proxy.target_url` is a host or `scheme://host` (http
 * when no scheme is given), `proxy.port` its port, and with `use_env` the target_url names an
 * environment variable holding the host, read on each replica (only the variables use-env-scope.ts
 * lets through reach here). RIG fell back to `localhost` for an
 * unset variable; that silently sends traffic to the wrong place, so here it is an error.
 */
import { type ProxySettings, unreadableUseEnv } from '../definitions/index.ts';

export interface TargetOrigin {
  /** `scheme://host:port`, as undici wants it. */
  origin: string;
  /** The Host header sent to the target (no port when it is the scheme's default). */
  host: string;
}

/** The origin, or a message saying why there is none. */
export function targetOrigin(proxy: ProxySettings, env: NodeJS.ProcessEnv): TargetOrigin | string {
  const configured = proxy.use_env ? env[proxy.target_url] : proxy.target_url;
  if (configured === undefined || configured === '')
    return `proxy.use_env ${unreadableUseEnv(proxy.target_url)}`;
  const withScheme = /^https?:\/\//i.test(configured) ? configured : `http://${configured}`;
  if (!URL.canParse(withScheme)) return `target_url ${JSON.stringify(configured)} is not a host or URL`;
  const url = new URL(withScheme);
  url.port = String(proxy.port);
  return { origin: url.origin, host: url.host };
}
