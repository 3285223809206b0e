import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { inboxAggregate, inboxIdOf } from '../../commands/integrations/inbox.ts';
import { ConflictError, ValidationError, type ErrorDetail } from '../../ledger/errors.ts';
import { RecentlyUsed } from '../../ledger/recently-used.ts';
import { UnauthorizedError } from '../errors.ts';
import { tooDeepBody } from '../json-depth.ts';
import { errorBody, text } from '../schemas.ts';
import { NO_ONE } from './webhook-secret.ts';
import { looksNative, nativeDelivery, nativeEventKind, verifiesNative, type NativeDelivery } from '../unified-native-delivery.ts';

export const WEBHOOK_PATH = '/unified/webhook';
export const SIGNATURE_HEADER = 'x-unified-signature';

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One message for an unknown connection and a wrong signature: the caller must not learn which ids exist. */
const notVerified = () => new UnauthorizedError('the X-Unified-Signature does not verify for this body and connection');

const nonBlank = (max: number) =>
  text()
    .max(max)
    .refine((value) => value.trim().length > 0, 'must not be blank');

const envelope = z.looseObject({
  connection_id: nonBlank(255).describe("The provider's connection id; must be an ACTIVE connection"),
  event: nonBlank(255).describe('The platform event kind, e.g. accounting.order.created; every kind is stored'),
  data: z.record(z.string(), z.unknown()).describe('The event payload; `data.id` (string or number) keys the inbox'),
});

const externalIdSchema = z.union([text(), z.number()]).optional();

const signatureHeaders = z.object({
  [SIGNATURE_HEADER]: z
    .string()
    .optional()
    .describe("Hex HMAC-SHA256 of the raw body, keyed with the webhook secret of the connection owner (the spec's envelope)"),
});

const refused = (message: string, details: ErrorDetail[]) => new ValidationError(message, details);

/** The body's bytes as JSON (strict UTF-8), or undefined when they are not. */
function jsonOf(raw: Buffer): unknown {
  try {
    return JSON.parse(utf8.decode(raw)) as unknown;
  } catch {
    return undefined;
  }
}

const issueDetails = (issues: z.core.$ZodIssue[]): ErrorDetail[] =>
  issues.map((issue) => ({ path: ['body', ...issue.path.map(String)].join('.'), message: issue.message }));

/** The body's bytes as JSON: strict UTF-8, then the envelope. */
function parseEnvelope(raw: Buffer): z.infer<typeof envelope> {
  const json = jsonOf(raw);
  if (json === undefined) throw refused('the body is not JSON', [{ path: 'body', message: 'must be a JSON object in UTF-8' }]);
  const parsed = envelope.safeParse(json);
  if (!parsed.success) throw refused('the webhook envelope is invalid', issueDetails(parsed.error.issues));
  // `data` as JSON.parse made it: a parsed copy would have turned a `__proto__` key into a prototype and lost it.
  return { ...parsed.data, data: (json as { data: Record<string, unknown> }).data };
}

const nativeNotVerified = () => new UnauthorizedError('the sig256 of this delivery does not verify with the workspace secret');

/**
 * A native delivery checked in this order: its signature with the workspace secret (401, before anything of it is
 * believed), then its shape (400). `data` as JSON.parse made it, for the reason parseEnvelope gives.
 */
function verifiedNative(json: unknown, workspaceSecret: string | undefined): NativeDelivery {
  const { data, nonce, sig256 } = json as { data: unknown[]; nonce?: unknown; sig256?: unknown };
  if (typeof sig256 !== 'string' || typeof nonce !== 'string') throw new UnauthorizedError('the delivery carries no sig256 and nonce');
  if (workspaceSecret === undefined || !verifiesNative(workspaceSecret, data, nonce, sig256)) throw nativeNotVerified();
  const parsed = nativeDelivery.safeParse(json);
  if (!parsed.success) throw refused('the delivery is invalid', issueDetails(parsed.error.issues));
  return { ...parsed.data, data: data as Record<string, unknown>[] };
}

/** A delivered object's `id` as text (a string or an integer); 400 for any other id. */
function nativeExternalIdOf(object: Record<string, unknown>, index: number): string | null {
  const { id } = object;
  if (id === undefined || id === null) return null;
  if ((typeof id === 'string' && id.trim() !== '' && id.length <= 255) || (typeof id === 'number' && Number.isSafeInteger(id))) {
    return String(id).trim();
  }
  throw refused('the delivery is invalid', [{ path: `body.data.${index}.id`, message: 'must be a non-blank string or an integer' }]);
}

/** `data.id` as text, when the platform gave a string or a number. */
function externalIdOf(data: Record<string, unknown>): string | null {
  const id = externalIdSchema.safeParse(data.id);
  if (!id.success) {
    if (typeof data.id !== 'string') return null;
    throw refused('the webhook envelope is invalid', [{ path: 'body.data.id', message: id.error.issues[0]?.message ?? 'is invalid' }]);
  }
  return id.data === undefined ? null : String(id.data);
}

function refuseInactive(connection: { status: string; unified_connection_id: string }, path: string): void {
  if (connection.status === 'ACTIVE') return;
  throw new ConflictError(`connection ${connection.unified_connection_id} is ${connection.status}: its events are refused`, [
    { path, message: `is ${connection.status}, not ACTIVE` },
  ]);
}

const matches = (secret: string, raw: Buffer, given: Buffer): boolean =>
  timingSafeEqual(createHmac('sha256', secret).update(raw).digest(), given);

/**
 * `POST /unified/webhook`, public: platforms sign the raw body with the connection owner's secret. Checks, in
 * this order: content type (415) and size (413), before any of our code; nesting depth (400, the raw bytes kept as
 * they came); signature header present and 64 hex (401);
 * JSON envelope (400); connection known and signature verified against its owner's current secret, or the previous
 * one within its grace (401, the same body either way, so the endpoint reveals no connection ids); connection ACTIVE
 * (409); then the delivery goes to the inbox and is answered 200 once committed to Kafka. See docs/decisions.md.
 */
export async function webhookReceiverRoutes(
  fastify: FastifyInstance,
  { workspaceSecret, recentDeliveries }: { workspaceSecret: string | undefined; recentDeliveries: number },
): Promise<void> {
  // The signature covers the exact bytes, so this context keeps them: its only parser is JSON as a Buffer.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(tooDeepBody(body as Buffer), body),
  );

  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { execute } = app.ledger;
  const secrets = app.webhookSecrets;
  /** Deliveries this instance has seen into the inbox (committed), by connection: their redeliveries need no command. */
  const seen = new RecentlyUsed<true>(recentDeliveries);

  /** Appends one delivery to the inbox, once committed to Kafka; false when the inbox had it already. */
  async function receive(
    request: FastifyRequest,
    connection: { id: string; unified_connection_id: string },
    delivery: { event: string; externalId: string | null; deliveryId: string; payload: string },
  ): Promise<boolean> {
    const { event, externalId, deliveryId, payload } = delivery;
    const key = `${connection.id}/${deliveryId}`;
    // The inbox has it (this instance saw it committed): the inbox would answer the same, after a round through Kafka.
    if (seen.get(key)) return false;
    const data = {
      inboxId: inboxIdOf(connection.id, externalId, deliveryId),
      deliveryId,
      connectionId: connection.id,
      event,
      externalId,
      payload,
    };
    const command = { type: 'ReceiveWebhook' as const, data: { ...data, unifiedConnectionId: connection.unified_connection_id } };
    const executed = await execute(request, inboxAggregate, command, undefined, { until: 'committed' });
    seen.set(key, true);
    return executed.positions.length > 0;
  }

  /** Each object of a verified native delivery is one inbox event, deduplicated per connection and external object. */
  async function receiveNative(request: FastifyRequest, reply: FastifyReply, delivery: NativeDelivery) {
    app.ledger.require('postgres');
    const { connection } = await secrets.connection(delivery.webhook.connection_id);
    // Only Unified holds the workspace secret; still, an unknown connection is answered as a wrong signature.
    if (!connection) throw nativeNotVerified();
    refuseInactive(connection, 'body.webhook.connection_id');
    await app.rateLimits.webhookConnection(request, reply, connection.id);
    const owner = { tenantId: connection.tenant_id, orgId: connection.org_id };
    request.principal = { ...owner, actor: { userId: connection.id, email: null, ip: request.ip } };
    const event = nativeEventKind(delivery.webhook.object_type, delivery.webhook.event);
    const outcomes = await Promise.all(
      delivery.data.map(async (object, index) => {
        const externalId = nativeExternalIdOf(object, index);
        const payload = JSON.stringify(object);
        // The object, not the body: Unified's retries of one delivery may carry a new nonce and signature.
        const deliveryId = createHash('sha256').update(`${event}\n${payload}`).digest('hex');
        return receive(request, connection, { event, externalId, deliveryId, payload });
      }),
    );
    const received = outcomes.filter(Boolean).length;
    return { status: 'received' as const, duplicate: received === 0 && outcomes.length > 0, received };
  }

  app.post(WEBHOOK_PATH, {
    schema: {
      tags: ['integrations'],
      summary: "Inbound platform events (public): the spec's envelope signed with X-Unified-Signature, or Unified's own delivery",
      description:
        "Two dialects. The spec's: the body is `{ connection_id, event, data }` as JSON; `X-Unified-Signature` is the hex " +
        "HMAC-SHA256 of its exact bytes, keyed with the connection owner's secret (`GET /api/v1/integrations/webhook-secret`). " +
        "Unified's native delivery: `{ data: [objects], webhook: { connection_id, object_type, event }, nonce, sig256, type }`, " +
        'no header, `sig256` the HMAC-SHA256 of `data` (as JSON) + `nonce` keyed with the workspace secret; each object of ' +
        '`data` is one inbox event (`<object type>.<event>`, e.g. accounting.order.created). 200 once the events are in the inbox ' +
        '(a redelivery: 200 with `duplicate: true`, stored once). 401 for a missing, malformed or wrong signature and for an ' +
        'unknown connection alike; 409 when the connection is not ACTIVE; 400 for a bad body; 413; 415; 429 when the ' +
        'connection is over its rate limit, or the source address over its budget of deliveries that did not verify.',
      security: [],
      headers: signatureHeaders,
      body: z.union([envelope, nativeDelivery]),
      response: {
        200: z.object({
          status: z.literal('received'),
          duplicate: z.boolean().describe('Nothing new: every event of the body was already in the inbox'),
          received: z.number().int().optional().describe('Native deliveries: the objects stored now (the rest were duplicates)'),
        }),
        400: errorBody,
        401: errorBody,
        409: errorBody,
        413: errorBody,
        415: errorBody,
        429: errorBody,
        503: errorBody,
      },
    },
    // An address that keeps sending what does not verify is refused before its bodies are read; a verified delivery
    // is charged to its connection instead (a forged connection id spends the sender's budget, not the connection's).
    onRequest: app.rateLimits.webhookAddress,
    onResponse: app.rateLimits.chargeUnverified,
    // The schemas above document the request; the handler checks it from the raw bytes, in its own order.
    validatorCompiler: () => (value) => ({ value }),
    handler: async (request, reply) => {
      const header = request.headers[SIGNATURE_HEADER];
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      // Unified's own delivery is signed in its body, not in the header: told apart by its shape.
      if (header === undefined) {
        const json = jsonOf(raw);
        if (looksNative(json)) return receiveNative(request, reply, verifiedNative(json, workspaceSecret));
      }
      if (typeof header !== 'string' || !HEX_SHA256.test(header)) {
        throw new UnauthorizedError('the X-Unified-Signature header is missing or is not 64 hex characters');
      }
      const given = Buffer.from(header, 'hex');
      const { connection_id: unifiedConnectionId, event, data } = parseEnvelope(raw);
      const externalId = externalIdOf(data);

      app.ledger.require('postgres');
      // Read once per WEBHOOK_LOOKUP_TTL_MS, an unknown id as a known one (the lookup's cost reveals no connection ids).
      const { connection, versions } = await secrets.connection(unifiedConnectionId);
      const owner = connection ? { tenantId: connection.tenant_id, orgId: connection.org_id } : NO_ONE;
      const known = secrets.inForce(owner, versions);
      const candidates = connection ? [known.current.secret, ...(known.previous ? [known.previous.secret] : [])] : [secrets.decoy()];
      // Every candidate is computed and compared: no early exit to time.
      const verified = candidates.map((secret) => matches(secret, raw, given)).some(Boolean);
      if (!connection || !verified) throw notVerified();

      // The caller holds the owner's secret: it may learn the connection's status.
      refuseInactive(connection, 'body.connection_id');
      await app.rateLimits.webhookConnection(request, reply, connection.id);

      request.principal = { ...owner, actor: { userId: connection.id, email: null, ip: request.ip } };
      const deliveryId = createHash('sha256').update(raw).digest('hex');
      const stored = await receive(request, connection, { event, externalId, deliveryId, payload: JSON.stringify(data) });
      return { status: 'received' as const, duplicate: !stored };
    },
  });
}
