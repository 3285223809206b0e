import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/**
 * UCP's checkout capability as published (2026-04-08, test/fixtures/ucp/README.md): the REST binding's OpenAPI
 * (`services/shopping/rest.openapi.json`) says which status an operation answers, the JSON Schemas judge the bodies.
 *
 * UCP publishes one schema per entity and marks, property by property, what a request of each operation sends
 * (`ucp_request`: `omit`, `optional`, `required`, or one of them per operation) and what a response leaves out
 * (`ucp_response: omit`); its tooling derives the request and response schemas from those marks. The same is done here:
 * every published file is loaded once as published (responses, after `ucp_response`) and once per request operation,
 * under a base URI of its own, with the marks applied. The checkout is the fulfillment extension's composition
 * (`fulfillment.json#/$defs/dev.ucp.shopping.checkout`), the extension the profile declares beside checkout.
 */
type Json = Record<string, unknown>;
export type UcpOperation = 'create' | 'update' | 'complete';

const root = new URL('../fixtures/ucp/', import.meta.url);
const files = (readdirSync(root, { recursive: true }) as string[]).filter(
  (name) => name.endsWith('.json') && !name.startsWith('main/') && !name.startsWith('services/'),
);
const published = files.map((name) => JSON.parse(readFileSync(new URL(name, root), 'utf8')) as Json);
type Parameter = { $ref?: string; name?: string; in?: string; required?: boolean; schema?: { type?: string; format?: string } };
const openapi = JSON.parse(readFileSync(new URL('services/shopping/rest.openapi.json', root), 'utf8')) as {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  webhooks: Record<string, { post: { parameters: Parameter[] } }>;
  components: { parameters: Record<string, Parameter> };
};

const BASE = 'https://ucp.dev/schemas/';

/** What a mark says for `operation` (a mark that does not name the operation leaves the property optional). */
const markOf = (mark: unknown, operation: string): string | undefined =>
  typeof mark === 'string'
    ? mark
    : mark && typeof mark === 'object'
      ? ((mark as Record<string, string>)[operation] ?? 'optional')
      : undefined;

/** The schema with `key`'s marks applied for `operation`: omitted properties refused, required ones required. */
function applyMarks(node: unknown, key: 'ucp_request' | 'ucp_response', operation: string): unknown {
  if (Array.isArray(node)) return node.map((item) => applyMarks(item, key, operation));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [name, value] of Object.entries(node as Json)) out[name] = applyMarks(value, key, operation);
  const properties = out.properties as Record<string, Json> | undefined;
  if (properties && typeof properties === 'object') {
    const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
    for (const [name, property] of Object.entries(properties)) {
      const mark = markOf(property?.[key], operation);
      if (mark === 'omit') {
        properties[name] = false as unknown as Json;
        required.delete(name);
      } else if (mark === 'required') required.add(name);
      else if (mark === 'optional') required.delete(name);
    }
    if (required.size > 0 || Array.isArray(out.required)) out.required = [...required];
  }
  return out;
}

const rebased = (schema: unknown, base: string): Json => JSON.parse(JSON.stringify(schema).replaceAll(BASE, base)) as Json;

// Strict, as the profile's validation (test/support/ucp-profile-schema.ts), knowing UCP's own annotation keywords.
const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true });
ajv.addVocabulary(['ucp_request', 'ucp_response', 'ucp_shared_request', 'name', 'embedded']);
ajvFormats.default(ajv);
for (const schema of published) ajv.addSchema(applyMarks(schema, 'ucp_response', 'response') as Json);
const OPERATIONS: UcpOperation[] = ['create', 'update', 'complete'];
for (const operation of OPERATIONS)
  for (const schema of published)
    ajv.addSchema(rebased(applyMarks(schema, 'ucp_request', operation), `https://ucp.dev/${operation}/schemas/`));

const validatorOf = (ref: string): ValidateFunction => {
  const validate = ajv.getSchema(ref);
  if (!validate) throw new Error(`no UCP schema ${ref}`);
  return validate;
};
const CHECKOUT = 'shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout';
const checkoutResponse = validatorOf(`${BASE}${CHECKOUT}`);
const errorResponse = validatorOf(`${BASE}shopping/types/error_response.json`);
const order = validatorOf(`${BASE}shopping/order.json`);
const requests = Object.fromEntries(OPERATIONS.map((op) => [op, validatorOf(`https://ucp.dev/${op}/schemas/${CHECKOUT}`)])) as Record<
  UcpOperation,
  ValidateFunction
>;

const problemsOf = (validate: ValidateFunction, value: unknown): string[] =>
  validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);

/** What UCP's schemas find wrong with a request body of `operation`; empty when it is valid. */
export const ucpRequestProblems = (operation: UcpOperation, body: unknown): string[] => problemsOf(requests[operation], body);

/**
 * What UCP's schemas find wrong with a 2xx answer: the OpenAPI's `checkout_response`, a checkout (with the fulfillment
 * extension) or, when `ucp.status` is `error`, an `error_response`.
 */
export function ucpResponseProblems(body: unknown): string[] {
  const status = (body as { ucp?: { status?: string } } | null)?.ucp?.status;
  return status === 'error' ? problemsOf(errorResponse, body) : problemsOf(checkoutResponse, body);
}

/** What UCP's schema finds wrong with an order (`dev.ucp.shopping.order`), the body of its order event webhook. */
export const ucpOrderProblems = (body: unknown): string[] => problemsOf(order, body);

/** What UCP's schemas find wrong with a Get Order answer: the OpenAPI's `order_response`, an order or an `error_response`. */
export function ucpOrderResponseProblems(body: unknown): string[] {
  const status = (body as { ucp?: { status?: string } } | null)?.ucp?.status;
  return status === 'error' ? problemsOf(errorResponse, body) : problemsOf(order, body);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What is wrong with an order event webhook's headers, by the parameters UCP's OpenAPI declares for it
 * (`webhooks.orderEvent`): each required one present, an integer where it says integer, a UUID where it says uuid.
 */
export function ucpOrderWebhookHeaderProblems(headers: Record<string, string | string[] | undefined>): string[] {
  const declared = (openapi.webhooks.orderEvent?.post.parameters ?? []).map((parameter) =>
    parameter.$ref ? (openapi.components.parameters[parameter.$ref.split('/').pop() ?? ''] ?? {}) : parameter,
  );
  return declared.flatMap(({ name = '', required, schema }) => {
    const value = headers[name.toLowerCase()];
    if (value === undefined) return required ? [`${name} is required`] : [];
    if (typeof value !== 'string') return [`${name} is sent more than once`];
    if (schema?.type === 'integer' && !/^\d+$/.test(value)) return [`${name} is not an integer`];
    if (schema?.format === 'uuid' && !UUID.test(value)) return [`${name} is not a UUID`];
    return [];
  });
}

/**
 * What is wrong with a protocol error (4xx, 5xx): UCP's REST binding gives it as a JSON body `{code, content}`
 * (optionally `continue_url`), for which it publishes no schema; this is that shape, closed.
 */
export function ucpProtocolErrorProblems(body: unknown): string[] {
  if (!body || typeof body !== 'object') return ['/ is not an object'];
  const { code, content, continue_url: continueUrl, ...rest } = body as Record<string, unknown>;
  return [
    ...(typeof code === 'string' && code.length > 0 ? [] : ['/code must be a non-empty string']),
    ...(typeof content === 'string' && content.length > 0 ? [] : ['/content must be a non-empty string']),
    ...(continueUrl === undefined || typeof continueUrl === 'string' ? [] : ['/continue_url must be a string']),
    ...Object.keys(rest).map((name) => `/${name} is not part of a protocol error`),
  ];
}

/** Whether UCP's OpenAPI declares `status` for the operation (`path` as the document spells it). */
export function ucpDeclaresStatus(method: string, path: string, status: number): boolean {
  return String(status) in (openapi.paths[path]?.[method.toLowerCase()]?.responses ?? {});
}
