/**
 * The schema registry as the gateway uses it (@kafkajs/confluent-schema-registry, which encodes and
 * decodes the Confluent wire format with avsc and keeps schemas by id): the latest schema id of a
 * subject, reused for KAFKA_SCHEMA_REGISTRY_CACHE_TTL, and the registry's failures sorted by whose
 * fault they are:
 * - registry unreachable or answering 5xx: DependencyUnavailableError('schema registry') — the
 *   request is answered 503 with Retry-After, a consumer retries the message;
 * - a subject or schema id the registry does not know: SchemaNotFoundError;
 * - data that does not fit the schema: AvroDataMismatchError, naming the fields.
 * While the registry is unreachable a subject's last known id stays in use: a schema version, once
 * registered, does not change, so the events stay readable.
 */
import type { Agent } from 'node:https';
import type { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { DependencyUnavailableError, unavailabilityOf } from '@gatehouse/service-kit';

export interface RegistryAuth {
  username: string;
  password: string;
}

export interface SchemaRegistrySettings {
  /** http(s)://[user:password@]host:port[/path]; the credentials become HTTP basic auth. */
  url: string;
  /** HTTP basic auth (instead of credentials in the URL). */
  auth?: RegistryAuth;
  /** For https: the CAs and client certificate to use (schema-registry-config.ts). */
  agent?: Agent;
  /** How long a subject's latest id is reused (0: asked each time). */
  cacheTtlMs: number;
  /** Time-out of one registry request: a registry that hangs counts as unavailable. */
  timeoutMs: number;
}

export class SchemaNotFoundError extends Error {
  override readonly name = 'SchemaNotFoundError';
}

export class AvroDataMismatchError extends Error {
  override readonly name = 'AvroDataMismatchError';
  /** Where the data does not fit, as JSON pointers into it (`/` for the whole value). */
  readonly paths: string[];

  constructor(subject: string, paths: string[], reason = 'does not match') {
    super(`the event's data ${reason} the Avro schema of subject ${subject} (at ${paths.join(', ')})`);
    this.paths = paths;
  }
}

const dependency = 'schema registry';

type RegistryOptions = ConstructorParameters<typeof SchemaRegistry>[0];

/**
 * The registry library (with protobufjs and mappersmith, some 75 modules) is imported at the first
 * request, so a service without a schema registry never loads it.
 */
async function openRegistry(options: RegistryOptions) {
  const [library, errors] = await Promise.all([
    import('@kafkajs/confluent-schema-registry'),
    import('@kafkajs/confluent-schema-registry/dist/errors.js'),
  ]);
  return {
    registry: new library.SchemaRegistry(options),
    avro: library.SchemaType.AVRO as SchemaType.AVRO,
    ValidationError: errors.ConfluentSchemaRegistryValidationError,
  };
}

/** Where and how the registry is reached, for a check outside the registry library (start-up). */
export interface RegistryEndpoint {
  /** The API's base URL without credentials, no trailing slash. */
  base: string;
  auth?: RegistryAuth;
  agent?: Agent;
  timeoutMs: number;
}

export class SchemaRegistryClient {
  readonly endpoint: RegistryEndpoint;
  private readonly registryOptions: RegistryOptions;
  private opened: ReturnType<typeof openRegistry> | undefined;
  private readonly cacheTtlMs: number;
  private readonly latest = new Map<string, { id: number; fetchedAt: number }>();
  private readonly lookups = new Map<string, Promise<number>>();

  constructor(settings: SchemaRegistrySettings) {
    const url = new URL(settings.url);
    const auth =
      settings.auth ??
      (url.username === ''
        ? undefined
        : { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) });
    url.username = '';
    url.password = '';
    const base = url.href.replace(/\/$/, '');
    this.endpoint = {
      base,
      timeoutMs: settings.timeoutMs,
      ...(auth && { auth }),
      ...(settings.agent && { agent: settings.agent }),
    };
    this.registryOptions = {
      host: base,
      clientId: 'gatehouse',
      ...(auth && { auth: { ...auth } }),
      ...(settings.agent && { agent: settings.agent }),
      // A publishing request waits for this: one quick retry, then the client is told to come back.
      retry: { retries: 1, initialRetryTimeInSecs: 0.05, maxRetryTimeInSecs: 1 },
      middlewares: [
        () => ({
          prepareRequest: (next) => next().then((req) => req.enhance({ timeout: settings.timeoutMs })),
        }),
      ],
    };
    this.cacheTtlMs = settings.cacheTtlMs;
  }

  private open(): ReturnType<typeof openRegistry> {
    this.opened ??= openRegistry(this.registryOptions);
    return this.opened;
  }

  /** The Confluent wire format of `payload` under the latest schema of `subject`. */
  async encode(subject: string, payload: unknown): Promise<Buffer> {
    const id = await this.latestId(subject);
    const { registry, ValidationError } = await this.open();
    try {
      return await registry.encode(id, payload);
    } catch (err) {
      if (err instanceof ValidationError) throw new AvroDataMismatchError(subject, err.paths.map(pointer));
      throw classify(err, `schema id ${id} of subject ${subject}`);
    }
  }

  /** The value of a message in the Confluent wire format, read with the schema it names. */
  async decode(wire: Buffer): Promise<unknown> {
    const { registry } = await this.open();
    try {
      return await registry.decode(wire);
    } catch (err) {
      throw classify(err, `schema id ${wire.readUInt32BE(1)}`);
    }
  }

  /** Registers a schema under a subject (tests, tools); the registry checks compatibility. */
  async register(subject: string, schema: object): Promise<number> {
    const { registry, avro } = await this.open();
    try {
      const { id } = await registry.register({ type: avro, schema: JSON.stringify(schema) }, { subject });
      return id;
    } catch (err) {
      throw classify(err, `subject ${subject}`);
    }
  }

  private async latestId(subject: string): Promise<number> {
    const known = this.latest.get(subject);
    if (known !== undefined && Date.now() - known.fetchedAt < this.cacheTtlMs) return known.id;
    let lookup = this.lookups.get(subject);
    if (lookup === undefined) {
      lookup = this.fetchLatestId(subject).finally(() => this.lookups.delete(subject));
      this.lookups.set(subject, lookup);
    }
    try {
      return await lookup;
    } catch (err) {
      if (known !== undefined && unavailabilityOf(err)) return known.id;
      throw err;
    }
  }

  private async fetchLatestId(subject: string): Promise<number> {
    const { registry } = await this.open();
    try {
      const id = await registry.getLatestSchemaId(subject);
      this.latest.set(subject, { id, fetchedAt: Date.now() });
      return id;
    } catch (err) {
      throw classify(err, `subject ${subject}`);
    }
  }
}

/**
 * The registry client reports HTTP answers as errors with a `status`; a connection that failed
 * comes back as status 400 with no registry error code, so the body's `error_code` tells them apart.
 */
function classify(err: unknown, what: string): Error {
  const status = (err as { status?: unknown }).status;
  const message = (err as Error).message ?? String(err);
  if (status === 404) return new SchemaNotFoundError(`the schema registry does not know ${what}`);
  // Credentials revoked or rotated after start: the gateway's own outage, not the client's input.
  if (status === 401 || status === 403)
    return new DependencyUnavailableError(
      dependency,
      `schema registry refused the credentials (HTTP ${status}; check KAFKA_SCHEMA_REGISTRY_BASIC_AUTH)`,
      { cause: err },
    );
  if (typeof status !== 'number' || status >= 500 || isConnectionFailure(err))
    return new DependencyUnavailableError(dependency, `schema registry unavailable: ${message}`, {
      cause: err,
    });
  return err instanceof Error ? err : new Error(message);
}

function isConnectionFailure(err: unknown): boolean {
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|socket hang up|timeout|certificate/i.test(
    (err as Error).message ?? '',
  );
}

function pointer(path: string[]): string {
  return `/${path.join('/')}`;
}
