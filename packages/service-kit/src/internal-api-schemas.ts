/**
 * The request bodies of the internal API are validated against the schemas of its OpenAPI document
 * (internal-api.openapi.json, served as /swagger.json): one JSON Schema source for the document,
 * the validation and the fuzzing (schemathesis reads the same document), through ajv.
 *
 * The validators report every problem (`allErrors`) with the schema and data of each
 * (`verbose`), so a service can turn them into its own error shape (the proxy's RIG-style map).
 * OpenAPI 3.1 schemas are JSON Schema 2020-12. Strict, so an unknown keyword or format fails at
 * start; `discriminator` (OpenAPI) and `x-error` (the proxy's error-map messages) are annotations.
 *
 * ajv (about 90 modules) is loaded on the first call, not with service-kit: only the proxy
 * validates internal API bodies, and every other service would carry it for nothing. Both
 * libraries are CommonJS, so a synchronous require keeps this API synchronous.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

export type { ErrorObject, ValidateFunction };

const documentId = 'gatehouse-internal-api';
let ajv: Ajv2020 | undefined;
let filling: Ajv2020 | undefined;

/** The validator of `#/components/schemas/<name>`; compiled once per process. */
export function internalApiSchema(name: string): ValidateFunction {
  ajv ??= loadSchemas();
  const validate = ajv.getSchema(`${documentId}#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`the internal API document has no schema ${name}`);
  return validate;
}

/**
 * Fills in, in place, the `default`s the schema `#/components/schemas/<name>` gives, so a service
 * applies the defaults the document states. For data that passed the validator.
 */
export function fillInternalApiDefaults(name: string, data: unknown): void {
  filling ??= loadSchemas(true);
  filling.getSchema(`${documentId}#/components/schemas/${name}`)?.(data);
}

const require = createRequire(import.meta.url);

function loadSchemas(useDefaults = false): Ajv2020 {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as (a: Ajv2020) => void;
  const file = new URL('./internal-api.openapi.json', import.meta.url);
  const document = JSON.parse(readFileSync(file, 'utf8')) as { components: unknown };
  const instance = new Ajv2020({
    allErrors: true,
    verbose: true,
    useDefaults,
    inlineRefs: false,
    strict: true,
    // if/then rules name `required` fields without repeating their `type` and `properties`.
    strictTypes: false,
    strictRequired: false,
  });
  instance.addKeyword({ keyword: 'discriminator' });
  instance.addKeyword({ keyword: 'x-error' });
  instance.addVocabulary(['components']);
  addFormats(instance);
  instance.addSchema({ $id: documentId, components: document.components });
  return instance;
}
