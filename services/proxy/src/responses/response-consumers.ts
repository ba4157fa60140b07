/**
 * Reading correlated responses from Kafka (PROXY_KAFKA_RESPONSE_TOPICS, binary messages: headers
 * `gw-correlation`, `gw-response-code`, value = body) and Kinesis (PROXY_KINESIS_RESPONSE_STREAMS,
 * a JSON CloudEvent with `gw.correlation`).
 *
 * Every replica reads every response as a broadcast subscriber and keeps those whose correlation id
 * names it: the id already says where the request waits, so no forwarding hop is needed and no
 * replica depends on another being up. (RIG shared one consumer group and sent the message to a PID
 * on whichever node held it.) The cost is that each replica reads the whole response stream.
 */
import type { Bus, Message, Subscription } from '@gatehouse/bus';
import { parseJsonEvent } from '@gatehouse/cloudevents';
import type { Logger } from '@gatehouse/service-kit';
import { type ParsedResponse, parseBinaryResponse, readCloudEventResponse } from './response-message.ts';
import type { DeliveryResult, ResponseRouter } from './response-router.ts';

export interface ResponseSource {
  bus: Bus;
  topics: string[];
}

export interface ResponseConsumerOptions {
  kafka?: ResponseSource | undefined;
  kinesis?: ResponseSource | undefined;
  router: ResponseRouter;
  /** MAX_JSON_DEPTH: a response event nested deeper is refused, as a published one. */
  maxJsonDepth: number;
  logger: Logger;
  onResponse?: (source: 'kafka' | 'kinesis', result: DeliveryResult | 'foreign' | 'bad_message') => void;
}

export async function startResponseConsumers(options: ResponseConsumerOptions): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  const { kafka, kinesis } = options;
  if (kafka !== undefined) {
    // Imported here: a proxy without Kafka responses never loads kafkajs.
    const { KafkaBus } = await import('@gatehouse/bus/kafka');
    for (const topic of kafka.topics) {
      if (kafka.bus instanceof KafkaBus) await kafka.bus.ensureTopic(topic);
      subscriptions.push(
        await kafka.bus.subscribe(topic, (m) => handle('kafka', m, fromKafka(m), options), {
          onError: (err) => options.logger.warn({ err, topic }, 'kafka response consumer error'),
        }),
      );
    }
  }
  if (kinesis !== undefined) {
    for (const stream of kinesis.topics) {
      subscriptions.push(
        await kinesis.bus.subscribe(
          stream,
          (m) => handle('kinesis', m, fromKinesis(m, options.maxJsonDepth), options),
          {
            onError: (err) => options.logger.warn({ err, stream }, 'kinesis response consumer error'),
          },
        ),
      );
    }
  }
  return subscriptions;
}

/**
 * A Kafka response gives the client its status (`gw-response-code`) and body, not the record's other
 * headers (the specification: "the client receives only the message body, without headers"; RIG
 * 3.0 copied them all): a record's headers are the backend's bus metadata, not a response to a
 * browser. Its `content-type` is kept, so the body can be read.
 */
function fromKafka(m: Message): ParsedResponse {
  const parsed = parseBinaryResponse(m.headers, m.value);
  if (!parsed.ok) return parsed;
  const contentType = parsed.response.headers['content-type'];
  return {
    ...parsed,
    response: {
      ...parsed.response,
      headers: contentType === undefined ? {} : { 'content-type': contentType },
    },
  };
}

function fromKinesis(m: Message, maxJsonDepth: number): ParsedResponse {
  return readCloudEventResponse(() => parseJsonEvent(m.value), maxJsonDepth);
}

function handle(
  source: 'kafka' | 'kinesis',
  m: Message,
  parsed: ParsedResponse,
  options: ResponseConsumerOptions,
): void {
  if (!parsed.ok) {
    options.logger.warn(
      { topic: m.topic, position: m.position, error: parsed.error },
      'response message ignored',
    );
    options.onResponse?.(source, 'bad_message');
    return;
  }
  const result = options.router.deliverLocal(parsed.correlation, parsed.response);
  if (result === 'forged')
    options.logger.warn(
      { topic: m.topic, position: m.position },
      'response with a forged correlation id ignored',
    );
  options.onResponse?.(source, result);
}
