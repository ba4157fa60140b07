/**
 * Creating events the gateway emits itself (`gw.connection.create`, `gw.subscriptions_set`,
 * `gw.session_killed` …) and wrapper events: CloudEvents 0.2 unless asked otherwise, as the spec
 * says, with a random UUID as id and the current time.
 */
import { randomUUID } from 'node:crypto';
import {
  type CloudEvent,
  contentTypeAttribute,
  defaultSpecVersion,
  type GwExtension,
  type SpecVersion,
} from './cloud-event.ts';
import { assertCloudEvent } from './validate.ts';

/** `source` of events the gateway creates when the caller names none. */
export const defaultEventSource = 'gw';

export interface NewEvent {
  type: string;
  data?: unknown;
  source?: string;
  specversion?: SpecVersion;
  /** Defaults to a random UUID. */
  id?: string;
  /** Defaults to now. */
  time?: Date | string;
  /** Media type of `data`, written as `contenttype` (0.2) or `datacontenttype` (1.0). */
  contentType?: string;
  gw?: GwExtension;
  /** Further attributes, e.g. `subject` (1.0), `traceparent`. */
  extensions?: Record<string, unknown>;
}

/** Throws InvalidCloudEventError when the result would not be a valid event (e.g. an empty type). */
export function createEvent(input: NewEvent): CloudEvent {
  const specversion = input.specversion ?? defaultSpecVersion;
  const time = input.time ?? new Date();
  const event: Record<string, unknown> = {
    specversion,
    type: input.type,
    source: input.source ?? defaultEventSource,
    id: input.id ?? randomUUID(),
    time: typeof time === 'string' ? time : time.toISOString(),
    ...input.extensions,
  };
  if (input.contentType !== undefined) event[contentTypeAttribute(specversion)] = input.contentType;
  if (input.gw !== undefined) event['gw'] = input.gw;
  if (input.data !== undefined) event['data'] = input.data;
  return assertCloudEvent(event);
}

/** A createEvent with this service's `source` (and spec version) filled in. */
export function eventFactory(defaults: {
  source: string;
  specversion?: SpecVersion;
}): (input: NewEvent) => CloudEvent {
  return (input) =>
    createEvent({
      ...input,
      source: input.source ?? defaults.source,
      specversion: input.specversion ?? defaults.specversion,
    });
}
