/**
 * The engine's settings. They are application properties (application.yml / .properties in the
 * config folder), each overridable by its environment variable (`rest.server.port` →
 * `REST_SERVER_PORT`). The config folder itself comes from `REST_CONFIG_FOLDER`. Unset, it is
 * `no-app/` of this package: an engine that listens with its built-in endpoints and none of its own.
 * A deployment runs what it was given, never an example it did not ask for; `make run` and the
 * tests that want the example app (examples/rest-app) name it.
 */
import { fileURLToPath } from 'node:url';
import {
  bool,
  type ConfigOf,
  type Field,
  int,
  list,
  loadConfig,
  optionalStr,
  port,
  str,
} from '@gatehouse/service-kit';
import { type AppProperties, envNameOf } from './app-properties.ts';

// src/ and dist/ (tools/build.ts) are both one level under the package.
export const defaultConfigFolder = fileURLToPath(new URL('../../no-app/', import.meta.url));

export const restSettingsSpec = {
  'rest.automation': bool('turns the REST engine on; off, the service starts no server', false),
  'rest.server.port': port('port of the engine HTTP server (`server.port` is used when this is unset)', 8085),
  'rest.server.host': str('address the engine HTTP server binds to', '0.0.0.0'),
  'rest.server.max-body-size': int(
    'largest accepted request body in bytes; larger ones get 413',
    10_485_760,
    {
      min: 0,
    },
  ),
  'rest.server.max-parameters': int(
    'most parameters (name=value pairs) in a query string (400 beyond) or a url-encoded form body (413 beyond)',
    1000,
    { min: 1 },
  ),
  'rest.server.max-xml-nodes': int(
    'most elements and attributes in an XML body, counted while it is parsed (413 beyond)',
    10_000,
    { min: 1 },
  ),
  'rest.server.max-json-members': int(
    'most object keys and array items, across every level, in a JSON body, counted on the bytes before it is parsed (413 beyond)',
    10_000,
    { min: 16 },
  ),
  'rest.multipart.max-parts': int('most parts in a multipart upload (413 beyond)', 1000, { min: 1 }),
  'rest.multipart.max-files': int('most files in a multipart upload (413 beyond)', 100, { min: 1 }),
  'rest.multipart.max-fields': int('most non-file fields in a multipart upload (413 beyond)', 1000, {
    min: 1,
  }),
  'flow.fork.max-width': int(
    'most branches a dynamic fork (`source:` a list) may start; a longer list aborts the flow with 400 naming it',
    1000,
    { min: 1 },
  ),
  'yaml.rest.automation': str(
    'rest.yaml locations, comma-separated, `classpath:` (config folder) or `file:`; read in order and merged',
    'classpath:/rest.yaml',
  ),
  'yaml.flow.automation': str(
    'flows index files (Event Script), comma-separated, `classpath:` or `file:`; each lists flow files under its `location`',
    'classpath:/flows.yaml',
  ),
  'yaml.kafka.flow.adapter': optionalStr(
    'Kafka flow adapter file (kafka-flow-adapter.yaml: topics bound to flows), `classpath:` or `file:`; empty: no Kafka consumer starts',
  ),
  'yaml.nats.flow.adapter': optionalStr(
    'NATS flow adapter file (nats-flow-adapter.yaml: subjects bound to flows), `classpath:` or `file:`; empty: no NATS consumer starts',
  ),
  'flow.adapter.max-bindings': int(
    'most bindings across the Kafka and NATS flow adapter files (start-up fails beyond)',
    64,
    {
      min: 1,
    },
  ),
  'flow.adapter.max-record-bytes': int(
    'largest record (value, key and headers) a flow adapter hands to a flow; a larger one is dead-lettered without a flow run',
    1_048_576,
    { min: 1024 },
  ),
  'flow.adapter.max-in-flight': int(
    'most records of one binding in flows at once (a binding may set a lower `max-in-flight`)',
    16,
    { min: 1, max: 10_000 },
  ),
  'kafka.flow.max.retries': int(
    'retries of a failed flow run before the record is dead-lettered (Kafka and NATS)',
    3,
    {
      min: 0,
      max: 100,
    },
  ),
  'kafka.flow.retry.backoff.ms': int('pause between the retries of a failed flow run', 500, {
    min: 0,
    max: 600_000,
  }),
  'kafka.dlq.timeout.ms': int('how long a dead-letter write may take before it counts as failed', 10_000, {
    min: 100,
  }),
  'kafka.flow.metadata.refresh.ms': int(
    'how often topic patterns are matched again (a new matching topic joins the binding) and consumer lag is read',
    10_000,
    { min: 200 },
  ),
  'kafka.flow.session.timeout.ms': int(
    'how long the group waits for a silent member (a killed replica) before its partitions go to the others',
    30_000,
    { min: 6_000, max: 300_000 },
  ),
  'kafka.flow.pattern.max-topics': int(
    'most topics one `topic-pattern` binding consumes; more matches are left out with a warning',
    100,
    {
      min: 1,
    },
  ),
  'static.html.folder': str(
    'folder of static content, `classpath:` or `file:`',
    'classpath:/resources/public',
  ),
  'flow.file.folders': list(
    'folders the `file(...)` mappings of flows may read and write, `classpath:` or `file:`, comma-separated; a path elsewhere (symbolic links resolved) aborts the flow; empty: `file(...)` is refused',
  ),
  'static.html.cache-max-bytes': int(
    'bytes of static file content kept in memory, least recently used out first; larger files are read per request',
    32 * 1024 * 1024,
    { min: 0 },
  ),
  'rest.relay.buffer-max-bytes': int(
    'an upstream answer to the HTTP relay that declares at most this many bytes is taken in whole and sent in one write (a short one is an error, not a cut answer); larger or unknown lengths are streamed; 0 streams all',
    64 * 1024,
    { min: 0 },
  ),
  'functions.path': list('folders whose modules are loaded as functions, comma-separated', [
    'classpath:/functions',
  ]),
  'http.trace.id.header': str('trace-id request header (a W3C traceparent wins over it)', 'X-Trace-Id'),
  'http.correlation.id.header': str('correlation-id header, read and echoed', 'X-Correlation-Id'),
  'http.traceparent.header': str(
    'extra carrier of the W3C trace context, read when `traceparent` is missing',
    'traceparent',
  ),
  'api.origin': str('allowed origin, for CORS values that refer to the api.origin property', '*'),
  'application.name': str('application name in /info, /health and trace records', 'rest-engine'),
  'info.app.version': str('version shown by /info', '0.1.0'),
  'info.app.description': str('description shown by /info', 'Gatehouse REST engine'),
  'mandatory.health.dependencies': list(
    'function routes /health calls (header `type: info`, then `type: health`); one failing makes it 400 DOWN',
  ),
  'optional.health.dependencies': list('function routes /health calls and reports without failing'),
} satisfies Record<string, Field<unknown>>;

export type RestSettings = ConfigOf<typeof restSettingsSpec> & { configFolder: string };

/** Reads every setting; throws a ConfigError naming each bad property. */
export function loadRestSettings(props: AppProperties, configFolder: string): RestSettings {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(restSettingsSpec)) raw[key] = props.get(key);
  // The spec accepts `server.port` for the engine when `rest.server.port` is not given.
  if (raw['rest.server.port'] === undefined) raw['rest.server.port'] = props.get('server.port');
  return { ...loadConfig(restSettingsSpec, raw), configFolder };
}

/** Markdown table rows for the README: property, environment variable, default, meaning. */
export function describeRestSettings(): string {
  const rows = Object.entries(restSettingsSpec).map(
    ([key, f]) => `| \`${key}\` | \`${envNameOf(key)}\` | ${f.defaultText} | ${f.description} |`,
  );
  return [
    '| property | environment variable | default | meaning |',
    '|---|---|---|---|',
    '| (config folder) | `REST_CONFIG_FOLDER` | none: built-in endpoints only (`no-app/`) | folder with application.yml / application.properties and the `classpath:` resources (`make run`: `examples/rest-app`) |',
    ...rows,
  ].join('\n');
}
