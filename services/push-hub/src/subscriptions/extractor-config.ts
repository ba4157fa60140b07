/**
 * The extractor configuration (`EXTRACTORS`, a file path or inline JSON): per event type, the
 * fields a subscription may constrain (a key may be a type pattern, `com.example.orders.*`: its
 * fields are those of the pattern's subscriptions), where each field's value sits in the event (a JSON pointer
 * into the whole CloudEvent) and optionally in the JWT (for subscriptions inferred from claims).
 *
 * { "greeting": { "name": { "stable_field_index": 1, "event": { "json_pointer": "/data/name" },
 *                           "jwt": { "json_pointer": "/username" } } } }
 */
import { readFileSync } from 'node:fs';
import { compileJsonPointer } from '@gatehouse/auth';
import { isTypePattern, typePatternProblem } from '@gatehouse/cloudevents';

export interface ExtractorField {
  name: string;
  stableFieldIndex: number;
  eventPointer: string;
  jwtPointer: string | undefined;
  /** The event pointer, compiled once. */
  readEvent: (event: unknown) => unknown;
}

/** Event type → its fields, ordered by stable_field_index. */
export type ExtractorConfig = Map<string, ExtractorField[]>;

export class ExtractorConfigError extends Error {
  override readonly name = 'ExtractorConfigError';
}

/** Reads `EXTRACTORS`: empty → no extractors; text starting with `{` → JSON; otherwise a file path. */
export function loadExtractorConfig(setting: string | undefined): ExtractorConfig {
  if (setting === undefined || setting.trim() === '') return new Map();
  const text = setting.trim().startsWith('{') ? setting : readSetting(setting);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ExtractorConfigError(`EXTRACTORS is not valid JSON: ${(err as Error).message}`);
  }
  return parseExtractorConfig(json);
}

function readSetting(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ExtractorConfigError(`cannot read EXTRACTORS file ${path}: ${(err as Error).message}`);
  }
}

export function parseExtractorConfig(json: unknown): ExtractorConfig {
  if (!isObject(json)) throw new ExtractorConfigError('extractor config must be an object of event types');
  const problems: string[] = [];
  const config: ExtractorConfig = new Map();
  for (const [eventType, fieldsJson] of Object.entries(json)) {
    // A key may be a type pattern: a malformed one would fail every connect its claims infer.
    const notPattern = isTypePattern(eventType) ? typePatternProblem(eventType, 64) : undefined;
    if (notPattern) problems.push(notPattern);
    if (!isObject(fieldsJson)) {
      problems.push(`${eventType}: must be an object of fields`);
      continue;
    }
    const fields: ExtractorField[] = [];
    const indexes = new Set<number>();
    for (const [name, spec] of Object.entries(fieldsJson)) {
      const where = `${eventType}.${name}`;
      if (!isObject(spec)) {
        problems.push(`${where}: must be an object`);
        continue;
      }
      const index = spec['stable_field_index'];
      if (!Number.isInteger(index) || (index as number) < 0) {
        problems.push(`${where}: stable_field_index must be a non-negative integer`);
        continue;
      }
      if (indexes.has(index as number)) problems.push(`${where}: stable_field_index ${index} is used twice`);
      indexes.add(index as number);
      const eventPointer = pointerOf(spec['event']);
      if (eventPointer === undefined) problems.push(`${where}: event.json_pointer must be a JSON pointer`);
      const jwtPointer = spec['jwt'] === undefined ? undefined : pointerOf(spec['jwt']);
      if (spec['jwt'] !== undefined && jwtPointer === undefined) {
        problems.push(`${where}: jwt.json_pointer must be a JSON pointer`);
      }
      fields.push({
        name,
        stableFieldIndex: index as number,
        eventPointer: eventPointer ?? '',
        jwtPointer,
        readEvent: compileJsonPointer(eventPointer ?? ''),
      });
    }
    config.set(
      eventType,
      fields.sort((a, b) => a.stableFieldIndex - b.stableFieldIndex),
    );
  }
  if (problems.length) throw new ExtractorConfigError(`invalid extractor config: ${problems.join('; ')}`);
  return config;
}

function pointerOf(spec: unknown): string | undefined {
  if (!isObject(spec)) return undefined;
  const p = spec['json_pointer'];
  return typeof p === 'string' && p.startsWith('/') ? p : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
