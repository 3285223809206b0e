import { inventoryAggregate } from '../../commands/oms/inventory.ts';
import { orderAggregate } from '../../commands/oms/order.ts';
import { projection, type Projection } from '../../ledger/projection.ts';
import { applyOmsBatch } from './oms-batch.ts';
import { omsAwaitKeyOf, omsEventTypes, type OmsEvent } from './oms-event.ts';
import { omsMigrations } from './oms-migrations.ts';

/** Orders with their status history, stock locations and stock levels, as /api/v1/oms reads them. */
export const omsProjection: Projection = projection<OmsEvent>({
  name: 'oms',
  topics: [orderAggregate.events, inventoryAggregate.events],
  migrations: omsMigrations,
  canHandle: omsEventTypes,
  handle: applyOmsBatch,
  awaitKeyOf: omsAwaitKeyOf,
});
