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

const webhook = parse(fixture('openapi.agentic_checkout_webhook.yaml')) as {
  paths: Record<string, { post: { parameters: { name: string; schema: { pattern?: string } }[] } }>;
  components: { schemas: Record<string, unknown> };
};

/** The webhook document's schemas, its references to the checkout document made references into the bundle. */
const webhookSchemas = JSON.parse(
  JSON.stringify(webhook.components.schemas)
    .replaceAll('"./openapi.agentic_checkout.yaml#/components/schemas/', `"${bundle.$id}#/$defs/`)
    .replaceAll('"#/components/schemas/', '"acp-webhook#/$defs/'),
) as Record<string, unknown>;
// The webhook document's EventDataOrder says `required` beside an `allOf` without `type: object` (strictTypes).
const webhookAjv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
webhookAjv.addVocabulary(['example']);
ajvFormats.default(webhookAjv);
webhookAjv.addSchema(bundle);
webhookAjv.addSchema({ $id: 'acp-webhook', $defs: webhookSchemas });

/** What ACP's order webhook finds wrong with an event we posted: the body (`WebhookEvent`) and `Merchant-Signature`'s form. */
export function acpWebhookProblems(body: unknown, merchantSignature: string | undefined): string[] {
  const problems = acpProblemsOf(webhookAjv.getSchema('acp-webhook#/$defs/WebhookEvent'), body);
  const parameter = Object.values(webhook.paths)[0]?.post.parameters.find((p) => p.name === 'Merchant-Signature');
  const pattern = new RegExp(parameter?.schema.pattern ?? '^$');
  if (!merchantSignature || !pattern.test(merchantSignature))
    problems.push(`Merchant-Signature ${merchantSignature} does not match ${pattern}`);
  return problems;
}

function acpProblemsOf(validate: ValidateFunction | undefined, value: unknown): string[] {
  if (!validate) throw new Error('the ACP webhook schema has no WebhookEvent');
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
}
