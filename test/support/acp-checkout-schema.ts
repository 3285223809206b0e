import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';

/**
 * The Agentic Commerce Protocol's Agentic Checkout contract as published (test/fixtures/acp/README.md names source
 * and version): the JSON Schema bundle judges bodies, the OpenAPI document which status codes an operation answers.
 */
const fixture = (name: string) => readFileSync(new URL(`../fixtures/acp/${name}`, import.meta.url), 'utf8');
const bundle = JSON.parse(fixture('schema.agentic_checkout.json')) as { $id: string; $defs: Record<string, unknown> };
const openapi = parse(fixture('openapi.agentic_checkout.yaml')) as {
  info: { version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

export const ACP_VERSION = openapi.info.version;

// strictRequired off: the bundle's `anyOf: [{required: [token]}, {required: [publisher_id]}]` names properties its branch does not define.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
// The bundle documents definitions with `example`, which JSON Schema does not define (Ajv knows OpenAPI's `nullable`).
ajv.addVocabulary(['example']);
ajvFormats.default(ajv);
ajv.addSchema(bundle);

const validators = new Map<string, ValidateFunction>();
const validatorOf = (definition: string): ValidateFunction => {
  let validate = validators.get(definition);
  if (!validate) {
    validate = ajv.getSchema(`${bundle.$id}#/$defs/${definition}`);
    if (!validate) throw new Error(`the ACP checkout schema has no $defs/${definition}`);
    validators.set(definition, validate);
  }
  return validate;
};

/** What the schema finds wrong with `value` as the named definition; empty when it is valid. */
export function acpProblems(definition: string, value: unknown): string[] {
  const validate = validatorOf(definition);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
}

/** Whether the OpenAPI document declares `status` for the operation (exactly, or by its `4XX`/`5XX` range). */
export function acpDeclaresStatus(method: string, path: string, status: number): boolean {
  const responses = openapi.paths[path]?.[method.toLowerCase()]?.responses ?? {};
  return String(status) in responses || `${String(status)[0]}XX` in responses;
}
