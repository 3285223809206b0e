import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { connectionAggregate, connectionIdOf, type ConnectionCategory } from '../../commands/integrations/connection.ts';
import { ProviderError, type ConnectionProvider } from '../../adapters/provider/provider.ts';
import { UnifiedClient } from '../../adapters/provider/unified-client.ts';
import type { Config } from '../../config.ts';
import { UnavailableError } from '../../ledger/dependencies.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Logger } from '../../ledger/logger.ts';
import { connectionsProjection } from '../../projections/integrations/connections-projection.ts';
import { findOwnedConnection, listActiveConnections, type ConnectionRow } from '../../projections/integrations/connections-queries.ts';
import type { Principal } from '../plugins/auth.ts';
import { oauthStateSigner, stateProblemMessage, type OAuthStateSigner } from '../oauth-state.ts';
import { errorBody, errorResponses, idParams, standardHeaders, text, timestamp, uuid } from '../schemas.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The connection provider's client and the OAuth state signer, one of each per process. */
    integrations: { provider: ConnectionProvider; states: OAuthStateSigner };
  }
}

/** Where the provider sends the tenant's browser back after the authorization, with `id` and `state` (or `error`). */
export const OAUTH_RETURN_PATH = '/unified/oauth/return';

/**
 * The provider client and the state signer, shared by the authenticated routes and the public return route (a
 * random per-process secret must sign and verify in the same process). Registered once, at the root.
 */
export const integrationsPlugin = fp(
  async (app: FastifyInstance, { config, logger }: { config: Config; logger: Logger }) => {
    const client = new UnifiedClient({
      baseUrl: config.UNIFIED_API_URL,
      token: config.UNIFIED_API_TOKEN,
      timeoutMs: config.UNIFIED_TIMEOUT_MS,
    });
    app.addHook('onClose', () => client.close());
    app.decorate('integrations', { provider: client, states: oauthStateSigner(config.INTEGRATION_STATE_SECRET, logger) });
  },
  { name: 'integrations' },
);

/** The provider did not answer usefully (5xx, 429, timeout, network): the client may retry; nothing was saved. */
export class ProviderUnavailableError extends UnavailableError {
  constructor(cause: ProviderError) {
    super('ledger');
    this.name = 'ProviderUnavailableError';
    this.message = `the connection provider is unavailable (${cause.kind}); retry later`;
    this.cause = cause;
  }
}

// ── Schemas ─────────────────────────────────────────────────────────────────
const category = z.enum(['commerce', 'accounting']);
/** The provider's id of a connection: opaque, printable, bounded. */
const unifiedConnectionId = text()
  .trim()
  .min(1, 'must not be blank')
  .max(255)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');
/** A platform name as the provider spells its integration types: lower-case letters, digits, `_` and `-`. */
const platform = text()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a platform name: lower-case letters, digits, _ and -, at most 64');
const stateToken = text().min(1).max(2048);

export const connection = z
  .object({
    id: uuid,
    unified_connection_id: z.string(),
    provider: z.string(),
    category,
    status: z.enum(['ACTIVE', 'DISCONNECTED', 'AUTH_FAILED']),
    status_reason: z.string().nullable().describe('Why the connection is AUTH_FAILED, as the provider said it'),
    default_location_id: uuid.nullable().describe("The stock location the connection's mapped orders reserve at (null: none)"),
    webhook_problem: z
      .string()
      .nullable()
      .describe("Why the provider refused to subscribe the connection to the platform's order events (retried with backoff); null: none"),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Connection' });

const authUrlQuery = z
  .object({
    category: category.default('commerce'),
    integration_type: platform
      .optional()
      .describe("The platform to connect (the provider's integration type, e.g. shopify); without it, the category"),
  })
  .strict();

const callbackBody = z
  .object({
    connection_id: unifiedConnectionId.describe('The connection id the provider issued during OAuth'),
    category: category.optional().describe("commerce (default) or accounting; with a `state`, the state's category"),
    provider: platform.optional().describe("The platform's name; without it, the provider is asked for the connection's integration type"),
    state: stateToken.optional().describe('The `state` the provider handed back; when given it must verify, or nothing is saved'),
  })
  .strict();

const callbackReply = z.object({ status: z.literal('success'), message: z.string(), connection });

const returnQuery = z.object({
  id: unifiedConnectionId.optional().describe('The new connection, on success'),
  state: stateToken.optional(),
  error: text().max(500).optional().describe('Why the provider refused, on failure'),
});

// ── Routes ──────────────────────────────────────────────────────────────────
export const toConnection = (row: ConnectionRow): z.infer<typeof connection> => ({
  id: row.id,
  unified_connection_id: row.unified_connection_id,
  provider: row.provider,
  category: row.category as ConnectionCategory,
  status: row.status,
  status_reason: row.status_reason,
  default_location_id: row.default_location_id,
  webhook_problem: row.webhook_problem ?? null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

type SaveRequest = { unifiedConnectionId: string; category: ConnectionCategory; provider?: string };

/**
 * Saves a provider connection for the request's principal, as the callback and the browser return both do: the
 * platform's name from the provider when not given, then the connection aggregate decides. Answers the record
 * once the read model shows it.
 */
async function saveConnection(app: FastifyInstance, request: FastifyRequest, save: SaveRequest, idPath: string): Promise<ConnectionRow> {
  const { db, execute, awaitOutcome } = app.ledger;
  const provider = save.provider ?? (await platformOf(app.integrations.provider, save.unifiedConnectionId, idPath));
  const connectionId = connectionIdOf(save.unifiedConnectionId);
  try {
    await execute(request, connectionAggregate, {
      type: 'SaveConnection',
      data: { connectionId, unifiedConnectionId: save.unifiedConnectionId, provider, category: save.category },
    });
  } catch (error) {
    // Saving never refuses as not found for its owner: the single writer found the connection owned by another org.
    if (error instanceof NotFoundError) {
      throw new ConflictError(`provider connection ${save.unifiedConnectionId} belongs to another organization`, [
        { path: idPath, message: 'is connected by another organization' },
      ]);
    }
    throw error;
  }
  app.webhookSecrets.forget();
  return awaitOutcome(connectionsProjection.name, () => findOwnedConnection(db, request.principal, connectionId));
}

/** The platform the provider says the connection is for (its integration type). */
async function platformOf(provider: ConnectionProvider, unifiedConnectionId: string, idPath: string): Promise<string> {
  const refused = (message: string) => new ValidationError(message, [{ path: idPath, message }]);
  let found;
  try {
    found = await provider.getConnection(unifiedConnectionId);
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.retryable) throw new ProviderUnavailableError(error);
    if (error.kind === 'auth') throw refused(`the connection provider refuses access to connection ${unifiedConnectionId} (revoked?)`);
    if (error.kind !== 'not_found') throw refused(`the connection provider refused connection ${unifiedConnectionId}: ${error.message}`);
  }
  if (!found) throw refused(`the connection provider does not know connection ${unifiedConnectionId}`);
  const name = platform.safeParse(found.integration_type);
  if (!name.success) throw new ProviderUnavailableError(new ProviderError('server', `unusable integration_type ${found.integration_type}`));
  return name.data;
}

/** A state handed back by the provider: ours, unexpired, and (at the callback) for the caller's tenant and org. */
function verifiedState(states: OAuthStateSigner, token: string, path: string, caller?: Pick<Principal, 'tenantId' | 'orgId'>) {
  const refused = (message: string) => new ValidationError(`the OAuth state is refused: it ${message}`, [{ path, message }]);
  const verification = states.verify(token);
  if (!verification.ok) throw refused(stateProblemMessage[verification.problem]);
  const { state } = verification;
  if (caller && (state.tenantId !== caller.tenantId || state.orgId !== caller.orgId)) {
    throw refused('was issued to another tenant or organization');
  }
  return state;
}

/** The integrations endpoints under /api/v1/integrations (authenticated; see http/app.ts). */
export default async function integrationRoutes(fastify: FastifyInstance, { config }: { config: Config }): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute, awaitOutcome } = app.ledger;
  const { provider, states } = app.integrations;
  const tags = ['integrations'];
  const returnUrl = new URL(OAUTH_RETURN_PATH, config.PUBLIC_BASE_URL).toString();

  app.post('/auth-url', {
    schema: {
      tags,
      summary: "The provider's authorization URL to send the user's browser to",
      description:
        'The URL names our workspace, the platform (integration type; the category when none is given) and a signed `state` ' +
        '(tenant, org, user, category, nonce, 15-minute expiry). The provider returns the browser to `/unified/oauth/return`, which saves the connection.',
      headers: standardHeaders,
      querystring: authUrlQuery,
      response: { 200: z.object({ auth_url: z.string() }), ...errorResponses },
    },
    handler: async (request) => {
      const { category: chosen, integration_type: integrationType = chosen } = request.query;
      const { tenantId, orgId, actor } = request.principal;
      const state = states.sign({ tenantId, orgId, userId: actor.userId, category: chosen });
      const authUrl = provider.authUrl({
        workspaceId: config.UNIFIED_WORKSPACE_ID,
        integrationType,
        successRedirect: returnUrl,
        failureRedirect: returnUrl,
        state,
      });
      return { auth_url: authUrl };
    },
  });

  app.post('/callback', {
    schema: {
      tags,
      summary: 'Save a connection the provider issued, and activate its background sync',
      description:
        'Saving the same connection again answers 201 with the same record (a DISCONNECTED or AUTH_FAILED one is reactivated). ' +
        "A `state`, when given, must be one this service issued to the caller's tenant and org within 15 minutes (else 400). " +
        "Another organization's connection: 409. The provider unknown connection: 400; the provider unreachable: 503.",
      headers: standardHeaders,
      body: callbackBody,
      response: { 201: callbackReply, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { connection_id: unifiedConnectionId, provider: named, state: token } = request.body;
      const state = token === undefined ? undefined : verifiedState(states, token, 'body.state', request.principal);
      if (state && request.body.category && request.body.category !== state.category) {
        throw new ValidationError('the category differs from the one the authorization was requested for', [
          { path: 'body.category', message: `must be ${state.category}, as in the state` },
        ]);
      }
      const chosen = request.body.category ?? state?.category ?? 'commerce';
      const row = await saveConnection(app, request, { unifiedConnectionId, category: chosen, provider: named }, 'body.connection_id');
      return reply.code(201).send({
        status: 'success' as const,
        message: `${row.provider} connection ${row.id} is ACTIVE; background sync is activated`,
        connection: toConnection(row),
      });
    },
  });

  app.get('/connections', {
    schema: {
      tags,
      summary: 'The ACTIVE connections of the organization, oldest first',
      headers: standardHeaders,
      response: { 200: z.object({ connections: z.array(connection) }), ...errorResponses },
    },
    handler: async (request) => ({ connections: (await listActiveConnections(db, request.principal)).map(toConnection) }),
  });

  app.get('/connections/:id', {
    schema: {
      tags,
      summary: 'One connection of the organization, whatever its status',
      headers: standardHeaders,
      params: idParams,
      response: { 200: connection, ...errorResponses },
    },
    handler: async (request) => {
      const row = await findOwnedConnection(db, request.principal, request.params.id);
      if (!row) throw new NotFoundError(`connection ${request.params.id} not found`);
      return toConnection(row);
    },
  });

  app.delete('/connections/:id', {
    schema: {
      tags,
      summary: 'Disconnect: the connection becomes DISCONNECTED, is unlisted and gets no more pushes',
      description: 'Idempotent: disconnecting a DISCONNECTED connection answers it again. Saving it again reactivates it.',
      headers: standardHeaders,
      params: idParams,
      response: { 200: connection, ...errorResponses },
    },
    handler: async (request) => {
      const { id } = request.params;
      await execute(request, connectionAggregate, { type: 'DisconnectConnection', data: { connectionId: id } });
      app.webhookSecrets.forget();
      return toConnection(await awaitOutcome(connectionsProjection.name, () => findOwnedConnection(db, request.principal, id)));
    },
  });
}

/**
 * The browser's return from the provider's authorization page (public: the browser carries no token). The signed
 * state names the tenant, org and user who asked, and the connection is saved for them as the callback saves it.
 */
export async function oauthReturnRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { states } = app.integrations;

  app.get(OAUTH_RETURN_PATH, {
    schema: {
      tags: ['integrations'],
      summary: "Where the provider returns the user's browser after the authorization (public)",
      description:
        'Saves the connection `id` for the tenant, org and user the signed `state` names. 400 for a missing, forged or expired ' +
        'state, and when the provider reports an `error` (the user or the platform refused).',
      security: [],
      querystring: returnQuery,
      response: { 200: z.object({ status: z.literal('success'), connection }), 400: errorBody, 409: errorBody, 503: errorBody },
    },
    handler: async (request) => {
      const { id, state: token, error } = request.query;
      if (error !== undefined) {
        throw new ValidationError(`the connection provider refused the authorization: ${error}`, [
          { path: 'query.error', message: 'the provider reported a failed authorization; nothing was saved' },
        ]);
      }
      if (token === undefined) throw new ValidationError('the OAuth state is missing', [{ path: 'query.state', message: 'is required' }]);
      const state = verifiedState(states, token, 'query.state');
      if (id === undefined) throw new ValidationError('the connection id is missing', [{ path: 'query.id', message: 'is required' }]);
      request.principal = { tenantId: state.tenantId, orgId: state.orgId, actor: { userId: state.userId, email: null, ip: request.ip } };
      const row = await saveConnection(app, request, { unifiedConnectionId: id, category: state.category }, 'query.id');
      return { status: 'success' as const, connection: toConnection(row) };
    },
  });
}
