/** A flow adapter binding, as the engine runs it: where records come from and which flow they go to. */
import type { RoutingRules } from './routing-rules.ts';

interface BindingBase {
  /** `kafka:<topic>`, `kafka:/<pattern>/` or `nats:<subject>`: the metrics label and log name. */
  readonly label: string;
  readonly routing: RoutingRules;
  /** `json`: a JSON object or array body is decoded before routing; else the bytes go as they are. */
  readonly serializer: 'json' | undefined;
  readonly maxInFlight: number;
  /** Header names (lower-cased) carrying the correlation id and, after `traceparent`, the trace context. */
  readonly correlationHeader: string;
  readonly traceparentHeader: string;
}

export interface KafkaBinding extends BindingBase {
  readonly kind: 'kafka';
  readonly topic: string | undefined;
  /** Full-string match of topic names, for `topic-pattern`. */
  readonly pattern: RegExp | undefined;
  readonly group: string;
  readonly partition: number | undefined;
  readonly dlqTopic: string | undefined;
  readonly autoCommit: boolean;
}

export interface NatsBinding extends BindingBase {
  readonly kind: 'nats';
  readonly subject: string;
  readonly queue: string;
  /** JetStream stream: the binding is a durable consumer (named `queue`) and acks after its flow. */
  readonly stream: string | undefined;
  readonly dlqSubject: string | undefined;
}

export type Binding = KafkaBinding | NatsBinding;
