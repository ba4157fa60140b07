/**
 * Reading a message from a source topic as a CloudEvent. Kafka binary mode (`ce_` headers) goes
 * through the Kafka binding; otherwise the value is JSON: a CloudEvent is taken as it is (and must
 * be valid), and anything that does not try to be one (no `specversion`) is wrapped into the `data`
 * of a new CloudEvent, as the spec asks. Throws for a message that claims to be a CloudEvent but
 * is not a valid one.
 *
 * A wrapper's id is the message's position in its source (Kafka partition and offset, NATS stream
 * sequence, Kinesis shard and sequence number) and its source names the broker and topic: a source
 * message that is delivered again (at least once) becomes the very same event, which the hubs
 * recognise as a duplicate. Those sources are the publisher's own (wrapped-source.ts in @gatehouse/event-submission): HTTP
 * producers may not use them.
 */
import type { Message } from '@gatehouse/bus';
import {
  type CloudEvent,
  fromJsonValue,
  looksLikeCloudEvent,
  parseKafkaEvent,
  wrapAsCloudEvent,
} from '@gatehouse/cloudevents';
import { wrappedSource } from '@gatehouse/event-submission';
import { wrappedTypeOf } from './wrapped-type.ts';

export function sourceMessageToEvent(
  message: Message,
  sourceKind: string,
  wrappedType: string | undefined,
): CloudEvent {
  const contentType = message.headers['content-type'];
  if (
    sourceKind === 'kafka' &&
    (message.headers['ce_specversion'] !== undefined || isCloudEventsJson(contentType))
  ) {
    return parseKafkaEvent({ key: message.key, value: message.value, headers: message.headers });
  }
  const json = tryJson(message.value);
  if (json !== undefined && looksLikeCloudEvent(json)) return fromJsonValue(json);
  return wrapAsCloudEvent(json !== undefined ? json : message.value, {
    type: wrappedTypeOf(message.topic, wrappedType),
    source: wrappedSource(sourceKind, message.topic),
    id: message.position,
    contentType: json !== undefined ? 'application/json' : contentType,
  });
}

function isCloudEventsJson(contentType: string | undefined): boolean {
  return contentType?.toLowerCase().startsWith('application/cloudevents+json') ?? false;
}

function tryJson(value: Buffer): unknown {
  try {
    return JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
}
