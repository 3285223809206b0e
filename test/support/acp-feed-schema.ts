import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/** The Agentic Commerce Protocol's feed schema (test/fixtures/acp/README.md names its source and version). */
const schema = JSON.parse(readFileSync(new URL('../fixtures/acp/schema.feed.json', import.meta.url), 'utf8')) as { $id: string };

const ajv = new Ajv2020({ strict: true, allErrors: true });
// The schema documents every definition with an `example`, a keyword JSON Schema does not define.
ajv.addVocabulary(['example']);
ajvFormats.default(ajv); // a CommonJS module: its default export is under `default`
ajv.addSchema(schema);

const validateProduct = ajv.getSchema(`${schema.$id}#/$defs/Product`);

/** What the schema finds wrong with a line of products.jsonl, as readable strings; empty when it is a valid `Product`. */
export function acpProductProblems(line: unknown): string[] {
  if (!validateProduct) throw new Error('the ACP feed schema has no $defs/Product');
  if (validateProduct(line)) return [];
  return (validateProduct.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
}
