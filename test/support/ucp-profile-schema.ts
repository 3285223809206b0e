import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/**
 * The Universal Commerce Protocol's JSON Schemas as published (test/fixtures/ucp/README.md names source and version):
 * a business profile's `ucp` is judged by the released `ucp.json#/$defs/business_schema` (2026-04-08), each of its
 * `signing_keys` by the only schema UCP publishes for one, `jwk_public_key` of `profile.json` on the repository's main.
 */
const root = new URL('../fixtures/ucp/', import.meta.url);
const released = (readdirSync(root, { recursive: true }) as string[]).filter(
  (name) => name.endsWith('.json') && !name.startsWith('main/') && !name.startsWith('services/'),
);

// Strict (unknown keywords and formats refused) but for two rules of schema style the published files do not follow:
// `allOf` branches that require properties another branch defines, and `required` without `type: object` beside it.
const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
// The checkout schemas carry UCP's annotations (which fields a request sends, the extension's name): keywords, not rules.
ajv.addVocabulary(['ucp_request', 'ucp_response', 'ucp_shared_request', 'name', 'embedded']);
ajvFormats.default(ajv);
for (const name of released) ajv.addSchema(JSON.parse(readFileSync(new URL(name, root), 'utf8')) as object);
ajv.addSchema(JSON.parse(readFileSync(new URL('main/profile.json', root), 'utf8')) as object);

const validatorOf = (ref: string): ValidateFunction => {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no UCP schema ${ref}`);
  return validate;
};
const businessSchema = validatorOf('https://ucp.dev/schemas/ucp.json#/$defs/business_schema');
const publicKey = validatorOf('https://ucp.dev/schemas/profile.json#/$defs/jwk_public_key');

const problemsOf = (validate: ValidateFunction, value: unknown, at: string): string[] =>
  validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${at}${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);

/** What UCP's schemas find wrong with a business profile (`{ucp, signing_keys}`); empty when it is valid. */
export function ucpProfileProblems(profile: { ucp?: unknown; signing_keys?: unknown }): string[] {
  const keys = profile.signing_keys;
  return [
    ...problemsOf(businessSchema, profile.ucp, '/ucp'),
    ...(Array.isArray(keys)
      ? keys.flatMap((key, index) => problemsOf(publicKey, key, `/signing_keys/${index}`))
      : ['/signing_keys is not an array']),
  ];
}
