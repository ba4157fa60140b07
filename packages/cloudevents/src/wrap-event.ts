/**
 * Events that are not CloudEvents. The spec: "An event that does not follow CloudEvents is not
 * supported; the event is put in the data field of a CloudEvent." A source message that does not
 * even try to be a CloudEvent (no `specversion`) is wrapped; one that tries and fails is rejected
 * with its problems, because wrapping it would hide the producer's mistake.
 */
import { type CloudEvent, defaultSpecVersion, type SpecVersion } from './cloud-event.ts';
import { createEvent } from './create-event.ts';
import { decodeData } from './event-data.ts';
import { fromJsonValue } from './json-format.ts';
import { isObject } from './json-object.ts';
import { validateCloudEvent } from './validate.ts';

export interface WrapOptions {
  /** Type of the wrapper event, e.g. the topic's configured event type. */
  type: string;
  source?: string;
  /**
   * Id of the wrapper event; default a random UUID. A source message delivered twice (at least
   * once) should get the same id both times, so that it is recognised as the same event.
   */
  id?: string;
  specversion?: SpecVersion;
  /** Media type of the payload; for bytes it decides JSON, text or base64 (see event-data.ts). */
  contentType?: string;
}

/** A JSON object with a `specversion` member: it means to be a CloudEvent, valid or not. */
export function looksLikeCloudEvent(value: unknown): boolean {
  return isObject(value) && 'specversion' in value;
}

/** A valid CloudEvent of a supported spec version. */
export function isCloudEvent(value: unknown): value is CloudEvent {
  return validateCloudEvent(value).length === 0;
}

/** A new event whose data is the payload; bytes are decoded by `contentType`. */
export function wrapAsCloudEvent(payload: unknown, options: WrapOptions): CloudEvent {
  const specversion = options.specversion;
  const decoded = Buffer.isBuffer(payload)
    ? decodeData(payload, options.contentType, specversion ?? defaultSpecVersion)
    : { data: payload };
  return createEvent({
    type: options.type,
    source: options.source,
    id: options.id,
    specversion,
    contentType: options.contentType,
    data: decoded.data,
    extensions: decoded.data_base64 === undefined ? undefined : { data_base64: decoded.data_base64 },
  });
}

/**
 * The value itself when it is a CloudEvent, the value wrapped when it does not look like one;
 * throws InvalidCloudEventError when it looks like one but is not valid.
 */
export function toCloudEvent(value: unknown, options: WrapOptions): CloudEvent {
  return looksLikeCloudEvent(value) ? fromJsonValue(value) : wrapAsCloudEvent(value, options);
}
