/**
 * How spans travel to the collector, from the OpenTelemetry environment variables (the specification's
 * names; a `_TRACES_` variable wins over the general one):
 * - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the specification's default), `http/json` or `grpc`;
 * - `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,…` (values percent-decoded), e.g. an API key;
 * - `OTEL_EXPORTER_OTLP_CERTIFICATE` (PEM CAs that sign the collector's certificate; unset: the
 *   system's), `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` and `OTEL_EXPORTER_OTLP_CLIENT_KEY` (mutual TLS)
 *   for an https:// endpoint.
 * The exporters would read some of these from process.env on their own, and log a file they cannot
 * read instead of failing; here they are read once, from the environment tracing is started with,
 * and anything unusable throws an error naming the variable, which stops start-up.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

export const otlpProtocols = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof otlpProtocols)[number];

export interface OtlpExporterSettings {
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  /** PEM contents; only what is set. */
  tls: { ca?: string; cert?: string; key?: string };
}

export function otlpExporterSettings(env: NodeJS.ProcessEnv): OtlpExporterSettings {
  const protocol = otlpProtocol(env);
  const headers = readHeaders(env);
  const ca = readFile(env, 'CERTIFICATE');
  const cert = readFile(env, 'CLIENT_CERTIFICATE');
  const key = readFile(env, 'CLIENT_KEY');
  if ((cert === undefined) !== (key === undefined))
    throw new Error(
      'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: set both, or neither',
    );
  if (cert !== undefined && key !== undefined) {
    try {
      createSecureContext({ cert, key });
    } catch (err) {
      throw new Error(
        `OTEL_EXPORTER_OTLP_CLIENT_KEY: not the key of OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: ${(err as Error).message}`,
      );
    }
  }
  return {
    protocol,
    headers,
    tls: { ...(ca !== undefined && { ca }), ...(cert !== undefined && key !== undefined && { cert, key }) },
  };
}

/** The `_TRACES_` variable when set, else the general one: [name, value]. */
function setting(env: NodeJS.ProcessEnv, suffix: string): [string, string] | undefined {
  for (const name of [`OTEL_EXPORTER_OTLP_TRACES_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`]) {
    const value = env[name]?.trim();
    if (value) return [name, value];
  }
  return undefined;
}

/** The protocol the environment names; throws naming the variable when it is none of them. */
export function otlpProtocol(env: NodeJS.ProcessEnv): OtlpProtocol {
  const found = setting(env, 'PROTOCOL');
  if (found === undefined) return 'http/protobuf';
  const protocol = otlpProtocols.find((p) => p === found[1].toLowerCase());
  if (protocol === undefined)
    throw new Error(`${found[0]}: must be one of ${otlpProtocols.join(', ')} (got '${found[1]}')`);
  return protocol;
}

function readHeaders(env: NodeJS.ProcessEnv): Record<string, string> {
  const found = setting(env, 'HEADERS');
  if (found === undefined) return {};
  const headers: Record<string, string> = {};
  for (const item of found[1].split(',')) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const name = at > 0 ? item.slice(0, at).trim() : '';
    // Names only, in the message: a header value is often a secret.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new Error(
        `${found[0]}: each item must be name=value with a header name (got an item named '${name}')`,
      );
    try {
      headers[name.toLowerCase()] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new Error(`${found[0]}: the value of '${name}' is not valid percent-encoding`);
    }
  }
  return headers;
}

function readFile(env: NodeJS.ProcessEnv, suffix: string): string | undefined {
  const found = setting(env, suffix);
  if (found === undefined) return undefined;
  try {
    return readFileSync(found[1], 'utf8');
  } catch (err) {
    throw new Error(`${found[0]}: cannot read ${found[1]}: ${(err as Error).message}`);
  }
}
