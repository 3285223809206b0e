import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { inventoryAggregate, inventoryIdOf, MAX_UNITS, type AdjustStockLevel, type SetStockLevel } from '../../commands/oms/inventory.ts';
import { NotFoundError } from '../../ledger/errors.ts';
import type { CommandInput } from '../../ledger/message.ts';
import { findLocation, listLevels, listLocations, type LevelRow, type LocationRow } from '../../projections/oms/oms-queries.ts';
import { createHeaders, newRecord } from '../idempotency-key.ts';
import { errorResponses, standardHeaders, text, timestamp, uuid } from '../schemas.ts';

const location = z.object({ id: uuid, name: z.string(), created_at: timestamp }).meta({ id: 'StockLocation' });

const level = z
  .object({
    variant_id: uuid,
    location_id: uuid,
    available: z.number().int().describe('Units that can be reserved by new orders'),
    reserved: z.number().int().describe('Units held by confirmed orders not yet shipped or cancelled'),
    on_hand: z.number().int().describe('available + reserved: units physically at the location'),
    updated_at: timestamp.nullable(),
  })
  .meta({ id: 'StockLevel' });

const levelParams = z.object({ variant_id: uuid, location_id: uuid });

const toLocation = (row: LocationRow): z.infer<typeof location> => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at.toISOString(),
});
const toLevel = (row: LevelRow): z.infer<typeof level> => ({
  variant_id: row.variant_id,
  location_id: row.location_id,
  available: row.available,
  reserved: row.reserved,
  on_hand: row.available + row.reserved,
  updated_at: row.updated_at.toISOString(),
});

export default async function inventoryRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db, execute } = app.ledger;
  const tags = ['inventory'];
  const inventoryOf = (request: FastifyRequest) => inventoryIdOf(request.principal.tenantId, request.principal.orgId);
  const readLevel = async (request: FastifyRequest, where: z.infer<typeof levelParams>) => {
    const [row] = await listLevels(db, request.principal, where);
    return row ? toLevel(row) : { ...where, available: 0, reserved: 0, on_hand: 0, updated_at: null };
  };

  const levelOf = (request: FastifyRequest, where: z.infer<typeof levelParams>) => ({
    inventoryId: inventoryOf(request),
    variantId: where.variant_id,
    locationId: where.location_id,
  });

  /** Sets or adjusts one level, then answers with it as the read model shows it. */
  const changeLevel = async (
    request: FastifyRequest,
    where: z.infer<typeof levelParams>,
    command: CommandInput<SetStockLevel | AdjustStockLevel>,
  ) => {
    await execute(request, inventoryAggregate, command);
    return readLevel(request, where);
  };

  app.post('/inventory/locations', {
    schema: {
      tags,
      summary: 'Create a stock location',
      headers: createHeaders,
      body: z.object({ name: text().trim().min(1).max(200) }).strict(),
      response: { 201: location, ...errorResponses },
    },
    handler: async (request, reply) => {
      const { id: locationId, idempotency } = newRecord(request, 'stock-location');
      const data = { inventoryId: inventoryOf(request), locationId, name: request.body.name };
      await execute(request, inventoryAggregate, { type: 'CreateStockLocation', data }, idempotency);
      const row = await findLocation(db, request.principal, locationId);
      if (!row) throw new NotFoundError(`stock location ${locationId} not found`);
      return reply.code(201).send(toLocation(row));
    },
  });

  app.get('/inventory/locations', {
    schema: {
      tags,
      summary: 'Stock locations, in creation order',
      headers: standardHeaders,
      response: { 200: z.array(location), ...errorResponses },
    },
    handler: async (request) => (await listLocations(db, request.principal)).map(toLocation),
  });

  app.put('/inventory/levels/:variant_id/:location_id', {
    schema: {
      tags,
      summary: 'Set the available quantity of a variant at a location',
      headers: standardHeaders,
      params: levelParams,
      body: z.object({ available: z.number().int().min(0).max(MAX_UNITS) }).strict(),
      response: { 200: level, ...errorResponses },
    },
    handler: async (request) =>
      changeLevel(request, request.params, {
        type: 'SetStockLevel',
        data: { ...levelOf(request, request.params), available: request.body.available },
      }),
  });

  app.post('/inventory/levels/:variant_id/:location_id/adjustments', {
    schema: {
      tags,
      summary: 'Add to (positive delta) or take from (negative delta) the available quantity; never below zero',
      headers: standardHeaders,
      params: levelParams,
      body: z.object({ delta: z.number().int().min(-MAX_UNITS).max(MAX_UNITS) }).strict(),
      response: { 200: level, ...errorResponses },
    },
    handler: async (request) =>
      changeLevel(request, request.params, {
        type: 'AdjustStockLevel',
        data: { ...levelOf(request, request.params), delta: request.body.delta },
      }),
  });

  app.get('/inventory/levels', {
    schema: {
      tags,
      summary: 'Stock levels with available, reserved and on_hand, optionally for one variant and/or location',
      headers: standardHeaders,
      querystring: z.object({ variant_id: uuid.optional(), location_id: uuid.optional() }).strict(),
      response: { 200: z.array(level), ...errorResponses },
    },
    handler: async (request) => {
      const { variant_id, location_id } = request.query;
      const filter = { ...(variant_id ? { variant_id } : {}), ...(location_id ? { location_id } : {}) };
      return (await listLevels(db, request.principal, filter)).map(toLevel);
    },
  });
}
