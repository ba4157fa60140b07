/**
 * The engine's parts every stage and target of the request pipeline works with, built once at
 * start. It names no stage: stages and targets import it, never each other through it.
 */
import type { BlockList } from 'node:net';
import type { FlowRunner } from '@gatehouse/flows';
import type { Logger } from '@gatehouse/service-kit';
import type { Tracer } from '@opentelemetry/api';
import type { MultipartLimits } from '../http/index.ts';
import type { Endpoint } from '../endpoints/index.ts';
import type { FunctionRegistry } from '../functions/index.ts';
import type { RestMetrics } from './rest-metrics.ts';
import type { RouteTable } from '../routing/index.ts';
import type { StaticContentConfig, StaticFolder } from '../static/index.ts';

export interface PipelineContext {
  table: RouteTable<Endpoint>;
  registry: FunctionRegistry;
  /** The flow engine, for `http.flow.adapter` endpoints. */
  flows: FlowRunner | undefined;
  staticFolder: StaticFolder | undefined;
  staticRules: StaticContentConfig;
  maxBodySize: number;
  /** MAX_JSON_DEPTH: a JSON, XML or form body nested deeper is refused (400). */
  maxJsonDepth: number;
  /** `rest.server.max-parameters`: query strings (400) and form bodies (413) with more are refused. */
  maxParameters: number;
  /** `rest.server.max-xml-nodes`: XML bodies with more elements and attributes are refused (413). */
  maxXmlNodes: number;
  /** `rest.server.max-json-members`: a JSON body with more keys and array items is refused (413). */
  maxJsonMembers: number;
  /** `rest.multipart.*`: uploads with more parts, files or fields are refused (413). */
  multipart: MultipartLimits;
  /** `rest.relay.buffer-max-bytes`: a relayed answer declaring at most this is taken in whole. */
  relayBufferBytes: number;
  /** TRUSTED_PROXIES: the only peers whose X-Forwarded-For/-Proto are believed (client ip, https). */
  trustedProxies: BlockList | undefined;
  /** Id of this engine instance (`origin` of trace records). */
  origin: string;
  logger: Logger;
  metrics: RestMetrics;
  tracer: Tracer;
}
