/**
 * PROXY_CONFIG_FILE: the API definitions a proxy starts with, given as a path to a JSON file or as
 * the JSON text itself (RIG tries the file first, then JSON; so do we). Anything wrong — unreadable
 * file, bad JSON, an invalid definition — is a ConfigError naming every problem, so the process
 * stops at start with one message instead of running with half a configuration.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, defaultMaxJsonDepth, JsonTooDeepError, exceedsJsonDepth } from '@gatehouse/service-kit';
import type { ApiDefinition } from './api-definition.ts';
import { describeValidationErrors, validateApiList } from './api-validation.ts';
import type { TargetAllowList } from '../forwarding/index.ts';

export function loadProxyConfig(
  setting: string | undefined,
  /** The variables `proxy.use_env` may read (useEnvScope); default none. */
  env: NodeJS.ProcessEnv = {},
  /** PROXY_TARGET_ALLOW; default: public addresses only. */
  targets?: TargetAllowList,
  /** MAX_JSON_DEPTH. */
  maxJsonDepth = defaultMaxJsonDepth,
): ApiDefinition[] {
  if (setting === undefined) return [];
  const text = readSetting(setting);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError([
      `PROXY_CONFIG_FILE: not a readable file nor valid JSON: ${(err as Error).message}`,
    ]);
  }
  if (exceedsJsonDepth(raw, maxJsonDepth))
    throw new ConfigError([
      `PROXY_CONFIG_FILE: ${new JsonTooDeepError('the API definition list', maxJsonDepth).message}`,
    ]);
  const result = validateApiList(raw, { env, targets });
  if (!result.ok)
    throw new ConfigError(
      describeValidationErrors(result.errors).map((line) => `PROXY_CONFIG_FILE: ${line}`),
    );
  return result.apis;
}

function readSetting(setting: string): string {
  const trimmed = setting.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return trimmed;
  if (!existsSync(trimmed))
    throw new ConfigError([`PROXY_CONFIG_FILE: no file ${trimmed} (and not JSON text)`]);
  try {
    return readFileSync(trimmed, 'utf8');
  } catch (err) {
    throw new ConfigError([`PROXY_CONFIG_FILE: cannot read ${trimmed}: ${(err as Error).message}`]);
  }
}
