/**
 * The published JSON Schema of kafka-flow-adapter.yaml and nats-flow-adapter.yaml
 * (`flow-adapter.schema.json` beside this package), compiled once.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

export const flowAdapterSchemaPath = fileURLToPath(
  new URL('../../flow-adapter.schema.json', import.meta.url),
);

export type AdapterDocumentKind = 'kafka' | 'nats';

let validators: Record<AdapterDocumentKind, ValidateFunction> | undefined;

function compile(): Record<AdapterDocumentKind, ValidateFunction> {
  const schema = JSON.parse(readFileSync(flowAdapterSchemaPath, 'utf8')) as { $id: string };
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictRequired: false,
    strictTypes: false,
    verbose: true,
  });
  ajv.addSchema(schema);
  const part = (name: string) => ajv.getSchema(`${schema.$id}#/definitions/${name}`)!;
  return { kafka: part('kafkaDocument'), nats: part('natsDocument') };
}

/** The schema's complaints about a parsed document, each naming where (`consumer.0.topic …`). */
export function adapterSchemaErrors(kind: AdapterDocumentKind, value: unknown): string[] {
  validators ??= compile();
  const validate = validators[kind];
  if (validate(value)) return [];
  return [...new Set((validate.errors ?? []).filter(isReportable).map(describe))];
}

/** A oneOf's branches each say what they missed; its own summary (below) says it once. */
function isReportable(e: ErrorObject): boolean {
  return !e.schemaPath.includes('/oneOf/');
}

function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : 'document';
  if (e.keyword === 'additionalProperties')
    return `${where} has an unknown key ${String(e.params['additionalProperty'])}`;
  if (e.keyword === 'oneOf') {
    // Both oneOf lists sit at `#/oneOf` of their own definition: the branches tell which one failed.
    const first = (e.parentSchema as { oneOf: Array<{ required: string[] }> }).oneOf[0]!.required[0];
    return first === 'flow'
      ? `${where} must set exactly one of flow or flows`
      : `${where} must set exactly one of topic or topic-pattern (partition only with topic)`;
  }
  return `${where} ${e.message ?? 'is invalid'}`;
}
