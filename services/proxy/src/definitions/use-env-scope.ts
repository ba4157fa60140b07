/**
 * What `proxy.use_env` may read. An API definition comes from whoever can reach the internal API,
 * so letting it name any environment variable would let it route traffic by a secret's value and
 * probe which variables exist. Only names on PROXY_USE_ENV_ALLOWED (exact, or a prefix ending in
 * `*`) are visible to it; the list is empty by default, so `use_env` is off until an operator names
 * the variables. A name outside the list reads exactly like an unset one, so errors tell nothing
 * about which variables the process has.
 */
import { type Field, list } from '@gatehouse/service-kit';

export const useEnvAllowedSetting = (): Field<string[]> => {
  const names = list(
    'environment variables proxy.use_env may name (comma list; `PREFIX_*` allows a prefix; empty: use_env is off)',
  );
  return {
    ...names,
    parse(raw) {
      const entries = names.parse(raw);
      const bad = entries.filter((e) => !/^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(e));
      if (bad.length > 0)
        throw new Error(`not variable names: ${bad.join(', ')} (a trailing * allows a prefix)`);
      return entries;
    },
  };
};

/** The variables of `env` that use_env may read; nothing else is in the result. */
export function useEnvScope(env: NodeJS.ProcessEnv, allowed: readonly string[]): Record<string, string> {
  const scope: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && allowed.some((entry) => matches(entry, name))) scope[name] = value;
  return scope;
}

function matches(entry: string, name: string): boolean {
  return entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name;
}

/** The one answer for a name use_env cannot read, whether it is unset or not allowed. */
export function unreadableUseEnv(name: string): string {
  return `names the environment variable ${name}, which is not set or not in PROXY_USE_ENV_ALLOWED`;
}
