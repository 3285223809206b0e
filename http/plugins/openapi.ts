import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { finishOpenapiDocument, SECURITY } from '../openapi-document.ts';
import { closedQueryAsOneParameter } from '../openapi-query.ts';

/**
 * OpenAPI generated from the routes' zod schemas: /openapi.json and the UI at /docs. `transform` turns each route's
 * schemas into JSON schema, with a `$ref` for every schema registered with `.meta({ id })`; `transformObject` emits
 * those registered schemas under `components.schemas`, then `finishOpenapiDocument` declares the standard headers
 * once, names the path parameters consistently and declares every response the service sends. A query that refuses
 * unknown parameters is documented as one closed object (openapi-query.ts).
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        info: { title: 'commerce-ledger', version: '1.0.0', description: 'Catalog, integrations and orders, on an event-sourced ledger.' },
        components: {
          securitySchemes: { [SECURITY.bearer]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
        },
        security: [{ [SECURITY.bearer]: [] }],
      },
      transform: (route) => closedQueryAsOneParameter(jsonSchemaTransform(route)),
      transformObject: (document) => finishOpenapiDocument(jsonSchemaTransformObject(document)),
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { persistAuthorization: true } });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
