/**
 * The API definition model, in RIG's JSON shape (reference §2.1): an API has an id, a name, how
 * tokens are read (`auth_type`, `auth`), where HTTP endpoints forward to (`proxy`) and its endpoints
 * under `version_data.default.endpoints`. These are the normalized types: validation
 * (api-validation.ts) fills in every default, so the rest of the proxy never guesses.
 */

export const httpMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpMethod = (typeof httpMethods)[number];

export const targets = ['http', 'kafka', 'kinesis', 'nats'] as const;
export type Target = (typeof targets)[number];

export const responseSources = ['http', 'kafka', 'http_async', 'kinesis', 'nats'] as const;
export type ResponseFrom = (typeof responseSources)[number];

/** Targets that turn the request into an event instead of forwarding it. */
export type EventTarget = Exclude<Target, 'http'>;

export interface AuthSettings {
  use_header: boolean;
  header_name: string;
  use_query: boolean;
  query_name: string;
}

export interface ProxySettings {
  /** Host, or scheme://host; with `use_env` the name of an environment variable holding it. */
  target_url: string;
  port: number;
  use_env: boolean;
}

export interface Endpoint {
  id: string;
  method: HttpMethod;
  /** Anchored when compiled: the whole request path must match. */
  path_regex: string;
  /** Replaces the forwarded path; `\1`, `\2` … insert the regex's capture groups. */
  path_replacement?: string;
  secured: boolean;
  transform_request_headers: boolean;
  target: Target;
  /** Kafka topic, Kinesis stream or NATS subject of an event target. */
  topic?: string;
  /** Kafka targets: the schema registry subject whose latest Avro schema encodes the event's data. */
  schema?: string;
  response_from: ResponseFrom;
  /** Milliseconds; overrides the PROXY_*_TIMEOUT setting that would apply. */
  response_timeout?: number;
  /**
   * Event targets: the request's credential headers (and the API's token query parameter) go into
   * the event's `gw` connection data too. Off by default: every consumer of the topic reads them.
   */
  publish_credentials: boolean;
}

export interface ApiDefinition {
  id: string;
  name: string;
  auth_type: 'jwt' | 'none';
  auth: AuthSettings;
  versioned: false;
  version_data: {
    default: {
      endpoints: Endpoint[];
      transform_request_headers?: { add_headers: Record<string, string> };
    };
  };
  /** Absent only when no endpoint forwards over HTTP. */
  proxy?: ProxySettings;
}

/** A definition as stored and listed: the definition plus bookkeeping. */
export interface StoredApi extends ApiDefinition {
  active: true;
  /** Counts the writes of this id, starting at 0. */
  ref_number: number;
  /** ISO time of the last write. */
  timestamp: string;
}

export function isEventTarget(target: Target): target is EventTarget {
  return target !== 'http';
}

/** Correlated responses arrive later and elsewhere for these; `http` and `nats` answer inline. */
export function waitsForCorrelation(responseFrom: ResponseFrom): boolean {
  return responseFrom === 'kafka' || responseFrom === 'http_async' || responseFrom === 'kinesis';
}
