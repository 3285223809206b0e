import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Config } from '../ledger/config.ts';
import type { Logger } from '../ledger/logger.ts';
import { getHttpResponseFromError } from './errors.ts';
import { authPlugin } from './plugins/auth.ts';
import { ledgerPlugin } from './plugins/ledger.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import auditRoutes from './routes/audit.ts';
import productRoutes from './routes/products.ts';
import statsRoutes from './routes/stats.ts';

export async function buildApp(config: Config, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const given = request.headers['x-correlation-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : randomUUID();
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.setErrorHandler((error, request, reply) => {
    const { statusCode, body } = getHttpResponseFromError(error);
    if (statusCode >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(statusCode).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { body } = getHttpResponseFromError({ statusCode: 404, message: `no route for ${request.method} ${request.url.split('?')[0]}` });
    return reply.code(404).send(body);
  });

  await app.register(openapiPlugin);
  await app.register(ledgerPlugin, { config, logger });
  await app.register(authPlugin, {
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    devSecret: config.AUTH_DEV_SECRET,
  });

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  await app.register(
    async (api) => {
      api.addHook('onRequest', api.authenticate);
      await api.register(productRoutes);
      await api.register(statsRoutes);
      await api.register(auditRoutes);
    },
    { prefix: '/api/v1/pim' },
  );
  return app;
}
