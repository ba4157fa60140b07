/**
 * The schema registry asked once at start (GET <api>/subjects), so that a wrong URL, credentials the
 * registry refuses or a certificate nobody vouches for stop start-up naming the setting, instead of
 * surfacing as a failed publish hours later. A registry that is down or answers 5xx is not a bad
 * setting: start-up goes on with a warning, and Avro requests answer 503 until it is back.
 * Asked with Node's https (not the registry library), which keeps the TLS error's code.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  ConfigError,
  isRefusedClientCertificate,
  isUntrustedServerCertificate,
  type Logger,
} from '@gatehouse/service-kit';
import type { RegistryEndpoint, SchemaRegistryClient } from './schema-registry-client.ts';

type Answer = { status: number; body: string } | { error: Error & { code?: unknown } };

/** Throws a ConfigError naming the setting the registry's answer points at; logs an unreachable one. */
export async function checkSchemaRegistry(
  registry: SchemaRegistryClient | undefined,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  if (registry === undefined) return;
  const endpoint = registry.endpoint;
  const answer = await getSubjects(endpoint);
  const problem = problemOf(endpoint, answer);
  if (problem !== undefined) throw new ConfigError([problem]);
  if ('error' in answer || answer.status >= 500)
    logger.warn(
      { registry: endpoint.base, reason: 'error' in answer ? answer.error.message : `HTTP ${answer.status}` },
      'schema registry unreachable at start; Avro requests answer 503 until it is back',
    );
}

/** The setting to blame for the answer, as one line, or undefined when it is fine or only down. */
function problemOf(endpoint: RegistryEndpoint, answer: Answer): string | undefined {
  const where = `${endpoint.base}/subjects`;
  if ('error' in answer) {
    const { error } = answer;
    if (isUntrustedServerCertificate(error))
      return `KAFKA_SCHEMA_REGISTRY_CA_FILE does not vouch for the registry's certificate (${where}): ${error.message}`;
    if (isRefusedClientCertificate(error.message))
      return `KAFKA_SCHEMA_REGISTRY_CERT_FILE: the registry refused the client certificate (${where}): ${error.message}`;
    return undefined;
  }
  const { status, body } = answer;
  if (status === 401 || status === 403)
    return endpoint.auth === undefined
      ? `KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the registry asks for credentials (${where} answered ${status})`
      : `KAFKA_SCHEMA_REGISTRY_BASIC_AUTH: the registry refused the credentials (${where} answered ${status})`;
  // nginx and other proxies answer a missing client certificate with 400 instead of a TLS alert.
  if (status === 400 && /SSL certificate|client certificate/i.test(body))
    return `KAFKA_SCHEMA_REGISTRY_CERT_FILE: the registry wants a client certificate (${where} answered 400: ${summary(body)})`;
  if (status >= 500) return undefined;
  if (status !== 200 || !isJsonArray(body))
    return `KAFKA_SCHEMA_REGISTRY_HOST: no Confluent-compatible registry API at ${endpoint.base} (GET /subjects answered ${status}: ${summary(body)}); Apicurio serves it under /apis/ccompat/v7`;
  return undefined;
}

function getSubjects(endpoint: RegistryEndpoint): Promise<Answer> {
  const url = new URL(`${endpoint.base}/subjects`);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {
    accept: 'application/vnd.schemaregistry.v1+json, application/json',
  };
  if (endpoint.auth)
    headers.authorization = `Basic ${Buffer.from(`${endpoint.auth.username}:${endpoint.auth.password}`).toString('base64')}`;
  return new Promise((resolve) => {
    const req = request(
      url,
      { headers, timeout: endpoint.timeoutMs, ...(endpoint.agent && { agent: endpoint.agent }) },
      (res) => readBody(res).then((body) => resolve({ status: res.statusCode ?? 0, body })),
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${endpoint.timeoutMs} ms`)));
    req.on('error', (error) => resolve({ error }));
    req.end();
  });
}

/** At most 64 KiB of the body: enough to tell a subject list from an error page. */
async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (bytes < 65_536) chunks.push(chunk);
    bytes += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isJsonArray(body: string): boolean {
  try {
    return Array.isArray(JSON.parse(body));
  } catch {
    return false;
  }
}

/** An answer's body on one short line (an HTML error page's title, a JSON error's message). */
function summary(body: string): string {
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1];
  const text = (title ?? body).replace(/\s+/g, ' ').trim();
  return text.length > 160 ? `${text.slice(0, 160)}…` : text || '(empty)';
}
