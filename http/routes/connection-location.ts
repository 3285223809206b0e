import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { connectionAggregate } from '../../commands/integrations/connection.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import { connectionsProjection } from '../../projections/integrations/connections-projection.ts';
import { findOwnedConnection } from '../../projections/integrations/connections-queries.ts';
import { findLocation } from '../../projections/oms/oms-queries.ts';
import { errorResponses, idParams, standardHeaders, uuid } from '../schemas.ts';
import { connection, toConnection } from './integrations.ts';

const body = z
  .object({
    location_id: uuid.nullable().describe('A stock location of the organization (POST /api/v1/oms/inventory/locations), or null for none'),
  })
  .strict();

/** `PUT /api/v1/integrations/connections/{id}/default-location`: where the connection's mapped orders reserve stock. */
export default async function connectionLocationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute, awaitOutcome } = app.ledger;

  app.put('/connections/:id/default-location', {
    schema: {
      tags: ['integrations'],
      summary: "Set the fulfilment location of the connection's mapped orders",
      description:
        'Lines of platform orders matched to a variant reserve stock at this location (inventory-backed lines); with none ' +
        '(null) they are recorded without a variant. Applies to orders mapped afterwards. 404 for a connection or a location ' +
        'the organization does not have.',
      headers: standardHeaders,
      params: idParams,
      body,
      response: { 200: connection, ...errorResponses },
    },
    handler: async (request) => {
      const { id } = request.params;
      const locationId = request.body.location_id;
      app.ledger.require('postgres', 'kafka');
      if (!(await findOwnedConnection(db, request.principal, id))) throw new NotFoundError(`connection ${id} not found`);
      if (locationId !== null && !(await findLocation(db, request.principal, locationId))) {
        throw new NotFoundError(`stock location ${locationId} not found`, [
          { path: 'body.location_id', message: 'no such stock location' },
        ]);
      }
      await execute(request, connectionAggregate, { type: 'SetConnectionDefaultLocation', data: { connectionId: id, locationId } });
      app.webhookSecrets.forget();
      const row = await awaitOutcome(connectionsProjection.name, async () => {
        const found = await findOwnedConnection(db, request.principal, id);
        return found && found.default_location_id === locationId ? found : undefined;
      });
      return toConnection(row);
    },
  });
}
