import * as operations from '@unified-api/typescript-sdk/sdk/models/operations';
import * as shared from '@unified-api/typescript-sdk/sdk/models/shared';
import type { ContractCheck, Exchange, Operation } from '../../stack/unified/published-shapes.ts';

/**
 * Holds the provider's stand-in, and so our client, to Unified.to's published contract: its TypeScript SDK
 * (`@unified-api/typescript-sdk`, a devDependency pinned to the version we checked, generated from Unified's OpenAPI).
 * Every request the stand-in takes (query and body) and every 2xx answer it gives, and every native delivery it sends,
 * is parsed with the SDK's own zod schemas. The SDK's object schemas pass unknown keys silently and its enums are open,
 * so a body must also survive the SDK's round trip (inbound, then outbound) unchanged (no field the model lacks, no
 * null where it wants a value), and webhook object types and events must be members of the SDK's enums.
 */

type ZodLike = { safeParse(value: unknown): { success: boolean; data?: unknown; error?: { issues: unknown[] } } };
type Model = { inbound: ZodLike; outbound: ZodLike };
type Rule = { query?: ZodLike & { _def: unknown }; path?: Record<string, string>; body?: Model; answer?: Model | 'list' | 'text' };

const model = (inbound: unknown, outbound: unknown): Model => ({ inbound: inbound as ZodLike, outbound: outbound as ZodLike });
const item = model(shared.CommerceItem$inboundSchema, shared.CommerceItem$outboundSchema);
const variant = model(shared.CommerceItemvariant$inboundSchema, shared.CommerceItemvariant$outboundSchema);
const webhook = model(shared.Webhook$inboundSchema, shared.Webhook$outboundSchema);
const connection = model(shared.Connection$inboundSchema, shared.Connection$outboundSchema);
const accountingOrder = model(shared.AccountingOrder$inboundSchema, shared.AccountingOrder$outboundSchema);

const listOf: Partial<Record<Operation, Model>> = {
  listCommerceItems: item,
  listCommerceItemvariants: variant,
  listUnifiedWebhooks: webhook,
};
const path = { connectionId: 'connection' };
const RULES: Record<Operation, Rule> = {
  getUnifiedIntegrationAuth: {
    query: operations.GetUnifiedIntegrationAuthRequest$outboundSchema as never,
    path: { workspaceId: 'workspace', integrationType: 'shopify' },
    answer: 'text',
  },
  getUnifiedConnection: { answer: connection },
  createCommerceItem: { body: item, answer: item },
  listCommerceItems: { query: operations.ListCommerceItemsRequest$outboundSchema as never, path, answer: 'list' },
  getCommerceItem: { answer: item },
  updateCommerceItem: { body: item, answer: item },
  patchCommerceItem: { body: item, answer: item },
  removeCommerceItem: {},
  createCommerceItemvariant: { body: variant, answer: variant },
  listCommerceItemvariants: { query: operations.ListCommerceItemvariantsRequest$outboundSchema as never, path, answer: 'list' },
  getCommerceItemvariant: { answer: variant },
  updateCommerceItemvariant: { body: variant, answer: variant },
  patchCommerceItemvariant: { body: variant, answer: variant },
  removeCommerceItemvariant: {},
  createUnifiedWebhook: { body: webhook, answer: webhook },
  listUnifiedWebhooks: { query: operations.ListUnifiedWebhooksRequest$outboundSchema as never, answer: 'list' },
  removeUnifiedWebhook: {},
  nativeDelivery: {},
};

const OBJECT_TYPES = new Set<string>(Object.values(shared.WebhookObjectType));
const EVENTS = new Set<string>(Object.values(shared.WebhookEvent));
/** The SDK's model of each object a native delivery carries, by webhook object type (the ones we subscribe to). */
const DELIVERED: Record<string, Model> = { accounting_order: accountingOrder, commerce_item: item, commerce_itemvariant: variant };

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/**
 * Whether the SDK's reading keeps all of what was sent: every field of `sent`, equal as JSON, an instant written either
 * way (`…Z` or with milliseconds) counting as the same. Fields the SDK adds (its defaults) are not ours to judge.
 */
function keeps(read: unknown, sent: unknown): boolean {
  if (typeof read === 'string' && typeof sent === 'string' && ISO_INSTANT.test(read) && ISO_INSTANT.test(sent)) {
    return Date.parse(read) === Date.parse(sent);
  }
  if (Array.isArray(read) || Array.isArray(sent)) {
    return Array.isArray(read) && Array.isArray(sent) && read.length === sent.length && sent.every((x, i) => keeps(read[i], x));
  }
  if (typeof read === 'object' && read !== null && typeof sent === 'object' && sent !== null) {
    const r = read as Record<string, unknown>;
    return Object.entries(sent).every(([key, value]) => value === undefined || (key in r && keeps(r[key], value)));
  }
  return read === sent;
}

const issuesOf = (result: { error?: { issues: unknown[] } }): string => JSON.stringify(result.error?.issues ?? []).slice(0, 600);

/** Why the value is not the SDK's model, or undefined when it is. */
export function modelProblem(m: Model, value: unknown): string | undefined {
  const parsed = m.inbound.safeParse(value);
  if (!parsed.success) return `does not parse: ${issuesOf(parsed)}`;
  const back = m.outbound.safeParse(parsed.data);
  if (!back.success) return `does not serialize back: ${issuesOf(back)}`;
  if (!keeps(JSON.parse(JSON.stringify(back.data)), value)) {
    return `is not the SDK's model: it reads back as ${JSON.stringify(back.data).slice(0, 600)}`;
  }
  return undefined;
}

function webhookEnumProblem(value: unknown): string | undefined {
  const { object_type: objectType, event } = (value ?? {}) as { object_type?: unknown; event?: unknown };
  if (typeof objectType !== 'string' || !OBJECT_TYPES.has(objectType))
    return `object_type ${JSON.stringify(objectType)} is not a WebhookObjectType`;
  if (typeof event !== 'string' || !EVENTS.has(event)) return `event ${JSON.stringify(event)} is not a WebhookEvent`;
  return undefined;
}

type FieldDef = { _def: { typeName: string; innerType?: FieldDef } };
const typeNameOf = (field: FieldDef): string =>
  field._def.typeName === 'ZodOptional' && field._def.innerType ? typeNameOf(field._def.innerType) : field._def.typeName;
const camel = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The query as the SDK's request object (camelCase, typed), parsed with the operation's request schema. */
function queryProblem(rule: Rule, query: URLSearchParams): string | undefined {
  if (!rule.query) return [...query.keys()].length > 0 ? `takes no query, got ${query.toString()}` : undefined;
  const shape = (rule.query as unknown as { _def: { schema: { shape: Record<string, FieldDef> } } })._def.schema.shape;
  const request: Record<string, unknown> = { ...rule.path };
  for (const key of new Set(query.keys())) {
    const field = shape[camel(key)];
    if (!field) return `query parameter ${key} is not the operation's`;
    const values = query.getAll(key);
    const type = typeNameOf(field);
    if (type !== 'ZodArray' && values.length > 1) return `query parameter ${key} is not an array, yet repeated`;
    request[camel(key)] =
      type === 'ZodArray' ? values : type === 'ZodNumber' ? Number(values[0]) : type === 'ZodBoolean' ? values[0] === 'true' : values[0];
  }
  const parsed = rule.query.safeParse(request);
  return parsed.success ? undefined : `query does not parse: ${issuesOf(parsed)}`;
}

function deliveryProblems(body: unknown): string[] {
  const { data, webhook: hook } = (body ?? {}) as { data?: unknown; webhook?: unknown };
  const problems: string[] = [];
  const hookProblem = modelProblem(webhook, hook) ?? webhookEnumProblem(hook);
  if (hookProblem) problems.push(`webhook ${hookProblem}`);
  const objectType = (hook as { object_type?: string } | undefined)?.object_type ?? '';
  const m = DELIVERED[objectType];
  if (!m) problems.push(`no SDK model known for delivered ${objectType} objects`);
  else if (!Array.isArray(data)) problems.push('data is not an array');
  else data.forEach((object, i) => void (modelProblem(m, object) && problems.push(`data.${i} ${modelProblem(m, object)}`)));
  return problems;
}

function problemsOf(exchange: Exchange): string[] {
  const rule = RULES[exchange.operation];
  if (exchange.kind === 'delivery') return deliveryProblems(exchange.body);
  if (exchange.kind === 'request') {
    const problems = [queryProblem(rule, exchange.query)];
    if (rule.body) problems.push(modelProblem(rule.body, exchange.body));
    if (exchange.operation === 'createUnifiedWebhook') problems.push(webhookEnumProblem(exchange.body));
    return problems.filter((p): p is string => p !== undefined);
  }
  if (exchange.status < 200 || exchange.status >= 300 || rule.answer === undefined) return [];
  if (rule.answer === 'text') return typeof exchange.body === 'string' ? [] : ['answers no text'];
  if (rule.answer === 'list') {
    const m = listOf[exchange.operation]!;
    if (!Array.isArray(exchange.body)) return ['answers no list'];
    return exchange.body.flatMap((entry, i) => {
      const problem = modelProblem(m, entry);
      return problem === undefined ? [] : [`[${i}] ${problem}`];
    });
  }
  const problems = [modelProblem(rule.answer, exchange.body)];
  if (rule.answer === webhook) problems.push(webhookEnumProblem(exchange.body));
  return problems.filter((p): p is string => p !== undefined);
}

export type UnifiedContract = { check: ContractCheck; checked: () => number; violations: () => string[]; take: () => string[] };

/** A contract check to give the stand-in: it counts the exchanges and keeps what violated the SDK's schemas. */
export function unifiedContract(): UnifiedContract {
  let checked = 0;
  let violations: string[] = [];
  return {
    check(exchange) {
      checked++;
      for (const problem of problemsOf(exchange)) violations.push(`${exchange.kind} of ${exchange.operation}: ${problem}`);
    },
    checked: () => checked,
    violations: () => [...violations],
    take() {
      const taken = violations;
      violations = [];
      return taken;
    },
  };
}
