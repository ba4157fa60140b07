/**
 * The published JSON Schema of rest.yaml (`rest.schema.json` beside this package), compiled once.
 * The engine checks every entry against it; unknown keys are reported as warnings (editors flag
 * them as typos) while any other violation skips the entry.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export const restSchemaPath = fileURLToPath(new URL('../../rest.schema.json', import.meta.url));

export type SchemaPart = 'endpoint' | 'cors' | 'headerSet' | 'staticContent';

export interface SchemaVerdict {
  errors: string[];
  /** Keys the schema does not know. */
  unknownKeys: string[];
}

type Validators = Record<SchemaPart | 'document', ValidateFunction>;
let validators: Validators | undefined;

function compile(): Validators {
  const schema = JSON.parse(readFileSync(restSchemaPath, 'utf8')) as { $id: string };
  const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
  ajv.addSchema(schema);
  const part = (name: SchemaPart) => ajv.getSchema(`${schema.$id}#/definitions/${name}`)!;
  return {
    document: ajv.getSchema(schema.$id)!,
    endpoint: part('endpoint'),
    cors: part('cors'),
    headerSet: part('headerSet'),
    staticContent: part('staticContent'),
  };
}

export function checkAgainstSchema(part: SchemaPart, value: unknown): SchemaVerdict {
  validators ??= compile();
  const validate = validators[part];
  if (validate(value)) return { errors: [], unknownKeys: [] };
  const all = validate.errors ?? [];
  const unknownKeys = all
    .filter((e) => e.keyword === 'additionalProperties')
    .map((e) => `${e.instancePath}/${String(e.params['additionalProperty'])}`.replace(/^\//, ''));
  const errors = [...new Set(all.filter(isReportable).map(describe))];
  return { errors, unknownKeys };
}

/** Validates a whole parsed rest.yaml document (used by tests and tools). */
export function validateRestDocument(value: unknown): string[] {
  validators ??= compile();
  const validate = validators.document;
  return validate(value) ? [] : (validate.errors ?? []).map(describe);
}

/** oneOf/anyOf summaries repeat what their branches say; keep the specific messages. */
function isReportable(e: ErrorObject): boolean {
  return e.keyword !== 'additionalProperties' && e.keyword !== 'oneOf' && e.keyword !== 'anyOf';
}

function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'entry';
  return `${where} ${e.message ?? 'is invalid'}`;
}
