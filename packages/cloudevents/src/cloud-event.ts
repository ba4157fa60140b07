/**
 * The CloudEvent model in the shape of the CloudEvents JSON event format, for the two spec versions
 * Gatehouse speaks: 0.2 (what the gateway itself creates, as the spec asks) and 1.0 (what current
 * producers send). The JSON shape is the in-memory shape too, so an event goes to SSE, WebSocket or
 * a structured-mode message without conversion. The gateway's `gw` extension object is part of the
 * model too: its shape is here, the functions that read and set it are in gw-extension.ts, which
 * imports this file and not the other way round.
 */

export const supportedSpecVersions = ['0.2', '1.0'] as const;
export type SpecVersion = (typeof supportedSpecVersions)[number];

/** The spec version of events the gateway creates itself. */
export const defaultSpecVersion: SpecVersion = '0.2';

interface CloudEventBase {
  specversion: SpecVersion;
  id: string;
  type: string;
  source: string;
  /** RFC 3339 timestamp. */
  time?: string;
  data?: unknown;
  /** The gateway's own extension object (correlation id, target partition, connection data). */
  gw?: GwExtension;
  /** Extension attributes. */
  [extension: string]: unknown;
}

export interface CloudEventV02 extends CloudEventBase {
  specversion: '0.2';
  schemaurl?: string;
  contenttype?: string;
}

export interface CloudEventV1 extends CloudEventBase {
  specversion: '1.0';
  dataschema?: string;
  datacontenttype?: string;
  subject?: string;
  /** Binary data, base64 encoded (JSON event format); never together with `data`. */
  data_base64?: string;
}

export type CloudEvent = CloudEventV02 | CloudEventV1;

/**
 * The `gw` extension object: the gateway's meta data on an event, like RIG's `rig` extension under
 * our name. Keys are camelCase as the spec says, except `target_partition`, which the spec names
 * explicitly.
 */
export interface GwExtension extends GwConnectionData {
  /** Correlation id of a proxied request waiting for its response. */
  correlation?: string;
  /** Partition (Kafka) or shard (Kinesis) key for broker and stream targets. */
  target_partition?: string;
  [key: string]: unknown;
}

/** The data of the request that produced an event, which the proxy puts into its `gw` object. */
export interface GwConnectionData {
  /** The peer's address (IPv4-mapped IPv6 shown as plain IPv4); forwarding headers are not trusted. */
  remoteIp?: string;
  /** Host name from the `Host` header, without the port. */
  host?: string;
  port?: number;
  scheme?: 'http' | 'https';
  method?: string;
  path?: string;
  /** Query string without the leading `?`; empty when there is none. */
  query?: string;
  /** Request headers with lower-case names; repeated headers joined with `, `. */
  headers?: Record<string, string>;
}

/** Attributes each version defines; every other top-level member is an extension. */
export const specAttributes: Record<SpecVersion, readonly string[]> = {
  '0.2': ['specversion', 'id', 'type', 'source', 'time', 'schemaurl', 'contenttype', 'data'],
  '1.0': [
    'specversion',
    'id',
    'type',
    'source',
    'time',
    'dataschema',
    'datacontenttype',
    'subject',
    'data',
    'data_base64',
  ],
};

/** The name of the attribute holding the data's media type, which differs between versions. */
export function contentTypeAttribute(version: SpecVersion): 'contenttype' | 'datacontenttype' {
  return version === '0.2' ? 'contenttype' : 'datacontenttype';
}

export function dataContentType(event: CloudEvent): string | undefined {
  return event.specversion === '0.2' ? event.contenttype : event.datacontenttype;
}

export function dataSchema(event: CloudEvent): string | undefined {
  return event.specversion === '0.2' ? event.schemaurl : event.dataschema;
}

export function isSupportedSpecVersion(value: unknown): value is SpecVersion {
  return typeof value === 'string' && (supportedSpecVersions as readonly string[]).includes(value);
}

/** Top-level members that are neither spec attributes nor `data`/`data_base64`. */
export function extensionNames(event: Record<string, unknown>, version: SpecVersion): string[] {
  const known = specAttributes[version];
  return Object.keys(event).filter((name) => !known.includes(name));
}
