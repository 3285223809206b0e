import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NotFoundError } from '../../ledger/errors.ts';
import { findOwnedConnection } from '../../projections/integrations/connections-queries.ts';
import { listInboundDeadLetters, type InboundDeadLetterRow } from '../../projections/integrations/inbound-queries.ts';
import { errorResponses, idParams, standardHeaders, timestamp, uuid } from '../schemas.ts';

const deadLetter = z
  .object({
    id: z.string().describe('The dead letter: what the DLQ CLI re-drives'),
    event: z.string().describe("The platform's event kind"),
    external_id: z.string().nullable().describe("The platform's order id (data.id)"),
    delivery_id: z.string(),
    reason: z.string().describe('Why the order mapping cannot map it'),
    status: z.enum(['DEAD_LETTERED', 'REDRIVEN']),
    times_dead_lettered: z.number().int(),
    dead_lettered_at: timestamp,
    redriven_at: timestamp.nullable(),
  })
  .meta({ id: 'InboundDeadLetter' });

const inbound = z
  .object({
    connection_id: uuid,
    dead_letters: z.array(deadLetter).describe('Most recent first, at most 100'),
  })
  .meta({ id: 'ConnectionInbound' });

const toDeadLetter = (row: InboundDeadLetterRow): z.infer<typeof deadLetter> => ({
  id: row.id,
  event: row.event,
  external_id: row.external_id,
  delivery_id: row.delivery_id,
  reason: row.reason,
  status: row.status,
  times_dead_lettered: row.times_dead_lettered,
  dead_lettered_at: row.dead_lettered_at.toISOString(),
  redriven_at: row.redriven_at ? row.redriven_at.toISOString() : null,
});

/** `GET /api/v1/integrations/connections/{id}/inbound`: the connection's webhooks the order mapping could not map. */
export default async function inboundRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { db } = app.ledger;

  app.get('/connections/:id/inbound', {
    schema: {
      tags: ['integrations'],
      summary: "The connection's inbound webhooks that could not be mapped into orders (dead letters)",
      description:
        'Each with the reason (malformed data, an unknown currency, an order the order rules refuse). An operator re-drives ' +
        'them once the cause is fixed; a re-driven one that fails again is listed as DEAD_LETTERED again.',
      headers: standardHeaders,
      params: idParams,
      response: { 200: inbound, ...errorResponses },
    },
    handler: async (request) => {
      const { id } = request.params;
      if (!(await findOwnedConnection(db, request.principal, id))) throw new NotFoundError(`connection ${id} not found`);
      const rows = await listInboundDeadLetters(db, request.principal, id);
      return { connection_id: id, dead_letters: rows.map(toDeadLetter) };
    },
  });
}
