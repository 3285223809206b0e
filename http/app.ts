import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type RouteOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { NotFoundError } from '../ledger/errors.ts';
import type { Logger } from '../ledger/logger.ts';
import type { LedgerMetrics } from '../ledger/metrics.ts';
import { errorField, failureKind, ThrottledLog } from '../ledger/throttled-log.ts';
import { clientErrorResponse, getHttpResponseFromError } from './errors.ts';
import { RequestLog } from './request-log.ts';
import type { LedgerFacade } from './ledger-facade.ts';
import { useStrictJsonBodies } from './json-body.ts';
import { drainRefusedBody } from './refused-body.ts';
import { authPlugin } from './plugins/auth.ts';
import { metricsPlugin } from './plugins/metrics.ts';
import { objectStorePlugin } from './plugins/object-store.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { rateLimitsPlugin } from './plugins/rate-limits.ts';
import auditRoutes from './routes/audit.ts';
import attributeRoutes from './routes/attributes.ts';
import brandRoutes from './routes/brands.ts';
import bulkJobRoutes from './routes/bulk-jobs.ts';
import catalogFeedRoutes from './routes/catalog-feed.ts';
import categoryRoutes from './routes/categories.ts';
import fileRoutes from './routes/files.ts';
import connectionLocationRoutes from './routes/connection-location.ts';
import inboundRoutes from './routes/inbound.ts';
import integrationRoutes, { integrationsPlugin, oauthReturnRoutes } from './routes/integrations.ts';
import mediaRoutes from './routes/media.ts';
import inventoryRoutes from './routes/inventory.ts';
import orderRoutes from './routes/orders.ts';
import productRoutes from './routes/products.ts';
import statsRoutes from './routes/stats.ts';
import { productPushRoutes, syncStatusRoutes } from './routes/sync.ts';
import { webhookReceiverRoutes } from './routes/webhook-receiver.ts';
import webhookSecretRoutes, { webhookSecretsPlugin } from './routes/webhook-secret.ts';
import templateRoutes from './routes/templates.ts';
import exportRoutes from './routes/exports.ts';
import validationRoutes from './routes/validation.ts';
import agentCheckoutRoutes from './routes/agent-checkout.ts';
import checkoutSessionRoutes from './routes/checkout-sessions.ts';
import ucpProfileRoutes from './routes/ucp-profile.ts';
import ucpCheckoutSessionRoutes from './routes/ucp-checkout-sessions.ts';
import ucpOrderRoutes from './routes/ucp-orders.ts';
import merchantCheckoutSessionRoutes from './routes/merchant-checkout-sessions.ts';
import { acpScope } from './acp-edge.ts';
import { ucpScope } from './ucp-edge.ts';
import { DEVELOPMENT_WEBHOOK_SECRET_KEY } from '../commands/integrations/webhook-secret.ts';

/** Every response names its request: the client's `X-Correlation-ID` when it gave a usable one, else a generated UUID. */
const CORRELATION_HEADER = 'x-correlation-id';

/** What an instance without the api role answers. */
const OPERATIONAL_PATHS = new Set(['/health', '/health/live', '/health/ready', '/metrics']);

const sendError = (reply: FastifyReply, error: unknown) => {
  const { statusCode, body, headers } = getHttpResponseFromError(error);
  if (headers) reply.headers(headers);
  reply.header(CORRELATION_HEADER, reply.request.id);
  return reply.code(statusCode).send(body);
};

/** A route that declares no query parameters refuses any (400), as the others refuse unknown ones: a misspelt filter must not be ignored. */
const refuseUndeclaredQuery = (route: RouteOptions) => {
  if (!route.schema?.querystring) route.schema = { ...route.schema, querystring: z.object({}).strict() };
};

/**
 * What every route under /api shares: authentication first, then the tenant's admission and rate limits (keyed by
 * the verified tenant, so no one spends another's budget), no query parameter it does not declare, and a read
 * refused at once while the read models' database is known to be down (writes check their own dependencies).
 */
const apiScope = (api: FastifyInstance) => {
  api.addHook('onRequest', api.authenticate);
  api.addHook('onRequest', api.rateLimits.admitTenant);
  api.addHook('onRequest', async (request) => {
    if (request.method === 'GET') api.ledger.require('postgres');
  });
  api.addHook('onRoute', refuseUndeclaredQuery);
};

/**
 * `ledger`: what the routes read and send commands through (bin/server.ts gives the running ledger's);
 * `metrics`: the registry GET /metrics serves, the one the ledger records into.
 */
export type AppOptions = { config: Config; logger: Logger; ledger: LedgerFacade; metrics: LedgerMetrics };

/** A number of hops trusts that many proxies in front of the service, whatever their addresses (as proxy-addr counts them). */
const trustProxy = (setting: number | string): string | ((address: string, hop: number) => boolean) =>
  typeof setting === 'number' ? (_address, hop) => hop < setting : setting;

/** The HTTP edge over a ledger started elsewhere: closing the app stops taking requests and drains them, not the ledger. */
export async function buildApp({ config, logger, ledger, metrics }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new RequestLog(),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Behind a load balancer every peer is the balancer: only a trusted one's X-Forwarded-For names the client.
    ...(config.TRUST_PROXY === undefined ? {} : { trustProxy: trustProxy(config.TRUST_PROXY) }),
    // node answers an HTTP/1.1 request without a Host header 400 with an empty body; the hook below answers it instead.
    http: { requireHostHeader: false },
    genReqId: (request) => {
      const given = request.headers['x-correlation-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
    // A malformed URL or an over-long path parameter is answered before routing; give it the one error body too.
    frameworkErrors: (error, _request, reply) => {
      sendError(reply as FastifyReply, error);
    },
    clientErrorHandler: (error, socket) => {
      if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      socket.end(clientErrorResponse(error), () => socket.destroy());
    },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header(CORRELATION_HEADER, request.id);
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request that lacks Host; nothing after it is trusted.
      reply.header('connection', 'close');
      throw Object.assign(new Error('an HTTP/1.1 request needs a Host header'), { statusCode: 400 });
    }
  });
  if (!config.SERVICE_ROLES.has('api')) {
    // An instance that runs only background parts serves its health and metrics; the API is another instance's.
    app.addHook('onRequest', async (request) => {
      const path = request.url.split('?')[0] ?? '';
      if (!OPERATIONAL_PATHS.has(path))
        throw new NotFoundError(`this instance does not serve ${request.method} ${path} (SERVICE_ROLES has no api)`);
    });
  }
  useStrictJsonBodies(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // During an outage every request fails the same way: one line per kind and interval, not a stack trace per request.
  const unavailableLog = new ThrottledLog(logger);
  app.setErrorHandler(async (error, request, reply) => {
    const { statusCode } = getHttpResponseFromError(error);
    if (statusCode === 413) await drainRefusedBody(request.raw);
    if (statusCode === 503)
      unavailableLog.write('warn', `unavailable:${failureKind(error)}`, { err: errorField(error) }, 'requests answered 503');
    else if (statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, error);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, { statusCode: 404, message: `no route for ${request.method} ${request.url.split('?')[0]}` }),
  );

  // The agents' credentials derive from the key the webhook secrets do, and rotate with them (commands/acp/acp-credentials.ts).
  const acpKey = config.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_WEBHOOK_SECRET_KEY;
  await app.register(metricsPlugin, { metrics });
  await app.register(openapiPlugin);
  await app.register(rateLimitsPlugin, config);
  app.decorate('ledger', ledger);
  await app.register(authPlugin, {
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    devSecret: config.AUTH_DEV_SECRET,
  });

  // Liveness: the process serves. Readiness: every dependency reachable and every part running (503 names the rest).
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/health/live', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/health/ready', { schema: { hide: true } }, async (_request, reply) => {
    const { ready, failing, checks } = app.ledger.readiness();
    return reply.code(ready ? 200 : 503).send(ready ? { status: 'ready', checks } : { status: 'not_ready', failing, checks });
  });

  // Platforms sign inbound webhooks with the connection owner's secret; saving a connection (below) forgets what the
  // receiver kept of connections.
  await app.register(webhookSecretsPlugin, { config, logger });
  // The connection provider's client and the OAuth state signer; the provider returns the browser to a public route.
  await app.register(integrationsPlugin, { config, logger });
  await app.register(oauthReturnRoutes);
  // The receiver is public and parses its own body.
  await app.register(webhookReceiverRoutes, {
    workspaceSecret: config.UNIFIED_WORKSPACE_SECRET,
    recentDeliveries: config.WEBHOOK_RECENT_DELIVERIES,
  });
  // Exports and catalog feeds; with the filesystem store their signed links are served here (the signature authorises).
  await app.register(objectStorePlugin, { config, logger });
  await app.register(fileRoutes);

  await app.register(
    async (api) => {
      apiScope(api);
      await api.register(productRoutes);
      await api.register(statsRoutes);
      await api.register(auditRoutes);
      await api.register(categoryRoutes);
      await api.register(brandRoutes);
      await api.register(attributeRoutes);
      await api.register(templateRoutes);
      await api.register(validationRoutes);
      await api.register(mediaRoutes);
      await api.register(bulkJobRoutes, {
        maxItems: config.BULK_MAX_ITEMS,
        bodyLimit: config.BULK_BODY_LIMIT_BYTES,
        // A chunk's command escapes its JSON text once more, and its event carries an envelope: well under a record.
        chunkBytes: Math.floor(config.RECORD_LIMIT_BYTES * 0.4),
      });
      await api.register(exportRoutes);
    },
    { prefix: '/api/v1/pim' },
  );
  await app.register(
    async (api) => {
      apiScope(api);
      await api.register(orderRoutes);
      await api.register(inventoryRoutes);
    },
    { prefix: '/api/v1/oms' },
  );
  await app.register(
    async (api) => {
      apiScope(api);
      await api.register(integrationRoutes, { config });
      await api.register(webhookSecretRoutes);
      await api.register(syncStatusRoutes);
      await api.register(connectionLocationRoutes);
      await api.register(inboundRoutes);
    },
    { prefix: '/api/v1/integrations' },
  );
  // The catalog feed for AI shopping agents (UCP): its settings, and redirects to its current files.
  await app.register(
    async (api) => {
      apiScope(api);
      await api.register(catalogFeedRoutes, { linkSeconds: config.FEED_LINK_SECONDS });
      await api.register(agentCheckoutRoutes, { key: acpKey, publicBaseUrl: config.PUBLIC_BASE_URL });
      await api.register(merchantCheckoutSessionRoutes, { publicBaseUrl: config.PUBLIC_BASE_URL });
    },
    { prefix: '/api/v1/ucp' },
  );
  // Agentic checkout (ACP): agents authenticate with the tenant's API key and sign their requests (http/acp-edge.ts).
  await app.register(
    async (acp) => {
      acpScope(acp, acpKey);
      await acp.register(checkoutSessionRoutes, { publicBaseUrl: config.PUBLIC_BASE_URL });
    },
    { prefix: '/api/v1/ucp/acp/:tenant_id/:org_id' },
  );
  // UCP's checkout (and the orders it placed) over REST, the same sessions: platforms authenticate with the tenant's API key (http/ucp-edge.ts).
  await app.register(
    async (ucp) => {
      ucpScope(ucp, acpKey);
      await ucp.register(ucpCheckoutSessionRoutes, { publicBaseUrl: config.PUBLIC_BASE_URL });
      await ucp.register(ucpOrderRoutes, { publicBaseUrl: config.PUBLIC_BASE_URL });
    },
    { prefix: '/api/v1/ucp/shopping/:tenant_id/:org_id' },
  );
  // The tenant's UCP business profile: public, as UCP's discovery wants (http/routes/ucp-profile.ts).
  await app.register(ucpProfileRoutes, { key: acpKey, publicBaseUrl: config.PUBLIC_BASE_URL });
  // Push and webhook sit under /unified without a version (the spec); the push is authenticated like /api.
  await app.register(
    async (api) => {
      apiScope(api);
      await api.register(productPushRoutes);
    },
    { prefix: '/unified' },
  );
  return app;
}
