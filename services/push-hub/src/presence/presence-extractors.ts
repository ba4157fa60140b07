/**
 * The fields a subscription to `gw.presence.joined` or `gw.presence.left` may constrain: the
 * `eventType` of the place, and each field of the announced types' extractors, read from the
 * place's constraint object. So `{"eventType": "gw.presence.joined", "oneOf": [{"eventType":
 * "chat.message", "room": 42}]}` gets the joins of room 42 of chat.message, and one without oneOf
 * every join.
 */
import { compileJsonPointer } from '@gatehouse/auth';
import { type ExtractorConfig, ExtractorConfigError } from '../subscriptions/index.ts';

export const PRESENCE_EVENT_TYPES = ['gw.presence.joined', 'gw.presence.left'] as const;

const escapePointer = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');

/** The extractor configuration with the presence events' fields added; refuses one that names them. */
export function withPresenceExtractors(extractors: ExtractorConfig, announced: string[]): ExtractorConfig {
  for (const type of PRESENCE_EVENT_TYPES)
    if (extractors.has(type))
      throw new ExtractorConfigError(
        `EXTRACTORS: ${type} is the gateway's own event; its fields are set by it`,
      );
  const names = new Set<string>();
  for (const type of announced) for (const f of extractors.get(type) ?? []) names.add(f.name);
  names.delete('eventType');
  const fields = [
    { name: 'eventType', pointer: '/data/eventType' },
    ...[...names].sort().map((name) => ({ name, pointer: `/data/where/${escapePointer(name)}` })),
  ].map(({ name, pointer }, i) => ({
    name,
    stableFieldIndex: i,
    eventPointer: pointer,
    jwtPointer: undefined,
    readEvent: compileJsonPointer(pointer),
  }));
  const all: ExtractorConfig = new Map(extractors);
  for (const type of PRESENCE_EVENT_TYPES) all.set(type, fields);
  return all;
}
