/**
 * CloudEvent validation for spec versions 0.2 and 1.0. It collects every problem instead of stopping
 * at the first, so a producer learns everything wrong with an event from one 400 answer.
 *
 * A JSON `null` in an optional attribute counts as absent (the JSON event format's rule). `source`
 * is checked as a non-empty string only, not against the URI-reference grammar, because producers
 * commonly use plain names (`tutorial`, `billing`) and rejecting those helps nobody. The 1.0 naming
 * rule for extension attributes is not applied to 0.2 events, whose producers never had it
 * enforced; in both versions the `gw` extension must be an object. Every String attribute, spec
 * or extension, in both versions, is refused when it holds a character the type system forbids
 * (attribute-text.ts): a CR/LF in `type` would otherwise reach the SSE `event:` line.
 */
import {
  type CloudEvent,
  extensionNames,
  isSupportedSpecVersion,
  type SpecVersion,
  supportedSpecVersions,
} from './cloud-event.ts';
import { forbiddenCharacter } from './attribute-text.ts';
import { type CloudEventProblem, InvalidCloudEventError, problem } from './errors.ts';
import { isObject } from './json-object.ts';
import { isMediaType } from './media-type.ts';
import { isRfc3339Timestamp } from './timestamp.ts';

type Json = Record<string, unknown>;

const extensionNameSyntax = /^[a-z0-9]+$/;
const maxExtensionNameLength = 20;
const base64Syntax = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function validateCloudEvent(value: unknown): CloudEventProblem[] {
  if (!isObject(value)) {
    return [problem('event', 'type', `a CloudEvent must be a JSON object, got ${describe(value)}`)];
  }
  const problems: CloudEventProblem[] = [];
  const version = checkSpecVersion(value, problems);
  for (const name of ['id', 'type', 'source']) checkRequiredString(value, name, problems);
  checkTimestamp(value, 'time', problems);
  if (version === '0.2') {
    checkOptionalString(value, 'schemaurl', problems);
    checkMediaType(value, 'contenttype', problems);
  } else if (version === '1.0') {
    checkUri(value, 'dataschema', problems);
    checkMediaType(value, 'datacontenttype', problems);
    checkOptionalString(value, 'subject', problems);
    checkDataBase64(value, problems);
    checkExtensionsV1(value, problems);
  }
  if (version !== undefined) checkExtensionText(value, version, problems);
  checkGw(value, problems);
  return problems;
}

/** Returns the value typed as a CloudEvent, or throws InvalidCloudEventError listing every problem. */
export function assertCloudEvent(value: unknown): CloudEvent {
  const problems = validateCloudEvent(value);
  if (problems.length > 0) throw new InvalidCloudEventError(problems);
  return value as CloudEvent;
}

function checkSpecVersion(event: Json, problems: CloudEventProblem[]): SpecVersion | undefined {
  const value = event['specversion'];
  if (!checkRequiredString(event, 'specversion', problems)) return undefined;
  if (isSupportedSpecVersion(value)) return value;
  problems.push(
    problem(
      'specversion',
      'specversion',
      `'specversion' ${quote(value)} is not supported; supported versions are ${supportedSpecVersions.join(', ')}`,
    ),
  );
  return undefined;
}

/** Returns whether the attribute is a non-empty string. */
function checkRequiredString(event: Json, name: string, problems: CloudEventProblem[]): boolean {
  if (event[name] === undefined) {
    problems.push(problem(name, 'required', `'${name}' is required`));
    return false;
  }
  return checkString(name, event[name], problems);
}

function checkOptionalString(event: Json, name: string, problems: CloudEventProblem[]): boolean {
  return isAbsent(event[name]) ? false : checkString(name, event[name], problems);
}

function checkString(name: string, value: unknown, problems: CloudEventProblem[]): boolean {
  if (typeof value !== 'string') {
    problems.push(problem(name, 'type', `'${name}' must be a string, got ${describe(value)}`));
    return false;
  }
  if (value === '') {
    problems.push(problem(name, 'empty', `'${name}' must not be an empty string`));
    return false;
  }
  return checkCharacters(name, value, problems);
}

/** Every String attribute, spec-defined or extension, of either version. */
function checkCharacters(name: string, value: string, problems: CloudEventProblem[]): boolean {
  const bad = forbiddenCharacter(value);
  if (bad === undefined) return true;
  problems.push(
    problem(
      name,
      'character',
      `'${name}' must not contain control characters (such as CR or LF), lone surrogates or noncharacters; found ${bad.codePoint} at position ${bad.index}`,
    ),
  );
  return false;
}

/** String values of extension attributes, in both versions (0.2 allows other types too). */
function checkExtensionText(event: Json, version: SpecVersion, problems: CloudEventProblem[]): void {
  for (const name of extensionNames(event, version)) {
    const value = event[name];
    if (typeof value === 'string') checkCharacters(name, value, problems);
  }
}

function checkTimestamp(event: Json, name: string, problems: CloudEventProblem[]): void {
  const value = event[name];
  if (checkOptionalString(event, name, problems) && !isRfc3339Timestamp(value as string)) {
    problems.push(
      problem(
        name,
        'format',
        `'${name}' must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z, got ${quote(value)}`,
      ),
    );
  }
}

function checkMediaType(event: Json, name: string, problems: CloudEventProblem[]): void {
  const value = event[name];
  if (checkOptionalString(event, name, problems) && !isMediaType(value as string)) {
    problems.push(
      problem(name, 'format', `'${name}' must be a media type such as application/json, got ${quote(value)}`),
    );
  }
}

function checkUri(event: Json, name: string, problems: CloudEventProblem[]): void {
  const value = event[name];
  if (checkOptionalString(event, name, problems) && !URL.canParse(value as string)) {
    problems.push(problem(name, 'format', `'${name}' must be an absolute URI, got ${quote(value)}`));
  }
}

function checkDataBase64(event: Json, problems: CloudEventProblem[]): void {
  const value = event['data_base64'];
  if (isAbsent(value)) return;
  if (typeof value !== 'string') {
    problems.push(problem('data_base64', 'type', `'data_base64' must be a string, got ${describe(value)}`));
  } else if (!base64Syntax.test(value)) {
    problems.push(problem('data_base64', 'format', `'data_base64' must be base64 encoded (RFC 4648)`));
  }
  if (event['data'] !== undefined) {
    problems.push(problem('data', 'exclusive', `'data' and 'data_base64' must not both be present`));
  }
}

/**
 * CloudEvents 1.0 extension attributes: lower-case alphanumeric names of at most 20 characters, and
 * values of the spec's type system (string, integer, boolean). `gw` is the one object-valued
 * exception: the spec makes the gateway's meta data an object.
 */
function checkExtensionsV1(event: Json, problems: CloudEventProblem[]): void {
  for (const name of extensionNames(event, '1.0')) {
    if (!extensionNameSyntax.test(name)) {
      problems.push(
        problem(
          name,
          'name',
          `extension attribute ${quote(name)} must be named with lower-case letters a-z and digits 0-9 only (CloudEvents 1.0)`,
        ),
      );
    } else if (name.length > maxExtensionNameLength) {
      problems.push(
        problem(
          name,
          'name',
          `extension attribute '${name}' must not be longer than ${maxExtensionNameLength} characters (CloudEvents 1.0)`,
        ),
      );
    }
    const value = event[name];
    if (name !== 'gw' && !isAbsent(value) && !isExtensionValue(value)) {
      problems.push(
        problem(
          name,
          'type',
          `extension attribute '${name}' must be a string, integer or boolean (CloudEvents 1.0), got ${describe(value)}`,
        ),
      );
    }
  }
}

function isExtensionValue(value: unknown): boolean {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (Number.isInteger(value) && (value as number) >= -(2 ** 31) && (value as number) < 2 ** 31)
  );
}

function checkGw(event: Json, problems: CloudEventProblem[]): void {
  const gw = event['gw'];
  if (isAbsent(gw)) return;
  if (!isObject(gw)) {
    problems.push(problem('gw', 'type', `'gw' must be an object, got ${describe(gw)}`));
    return;
  }
  for (const key of ['correlation', 'target_partition']) {
    const value = gw[key];
    if (!isAbsent(value) && typeof value !== 'string') {
      problems.push(problem(`gw.${key}`, 'type', `'gw.${key}' must be a string, got ${describe(value)}`));
    }
  }
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${quote(value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
