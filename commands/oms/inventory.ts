import { uuidv5 } from '../../ledger/uuid-v5.ts';
import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

/**
 * All the stock of one tenant's organization is one aggregate, so a multi-line reservation is one
 * decision of one single writer: all lines or none, and `available` never goes below zero.
 */

const INVENTORY_NAMESPACE = '9d3b1f7a-2c4e-4b8d-a1f6-7e5c3d2b9a41';
export const inventoryIdOf = (tenantId: string, orgId: string): string => uuidv5(`${tenantId}/${orgId}`, INVENTORY_NAMESPACE);

// ── Events ──────────────────────────────────────────────────────────────────
export type StockLine = { variantId: string; locationId: string; quantity: number };
/** A line of an order as the reservation sees it; `lineIndex` is its position in the order's line items. */
export type ReservationLine = StockLine & { lineIndex: number };

export type StockLocationCreated = Event<'StockLocationCreated', { inventoryId: string; locationId: string; name: string }>;
export type StockAdjusted = Event<
  'StockAdjusted',
  { inventoryId: string; variantId: string; locationId: string; delta: number; available: number; reason: 'set' | 'adjust' }
>;
/**
 * `reservedAhead`: reserved before the order is placed (an agentic checkout's completion), under the id the order will
 * have; the order pipeline confirms such an order without reserving again, and a refusal leaves no order behind.
 */
export type StockReserved = Event<
  'StockReserved',
  { inventoryId: string; orderId: string; lines: ReservationLine[]; reservedAhead?: boolean }
>;
export type StockReservationRefused = Event<
  'StockReservationRefused',
  {
    inventoryId: string;
    orderId: string;
    lineIndex: number;
    variantId: string;
    locationId: string;
    requested: number;
    available: number;
    reason: string;
    reservedAhead?: boolean;
  }
>;
export type StockReleased = Event<'StockReleased', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;
export type StockShipped = Event<'StockShipped', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;

export type InventoryEvent = StockLocationCreated | StockAdjusted | StockReserved | StockReservationRefused | StockReleased | StockShipped;

// ── State ───────────────────────────────────────────────────────────────────
export type Level = { available: number; reserved: number };
/**
 * Locations and levels only. Which reservations are held is the orders' business: an order's state machine ends
 * its reservation at most once and the order pipeline says which lines to release or ship, so the state does
 * not grow with the open orders.
 */
export type Inventory = {
  locations: Record<string, { name: string }>;
  /** Keyed by `${variantId}|${locationId}`. */
  levels: Record<string, Level>;
};

/**
 * The most units one level holds on hand (`available + reserved`), and so the most either part holds. Levels,
 * reservations and refusals travel as Avro ints and sit in the read model's integer columns (2^31 − 1 ≈ 2.1 × 10^9):
 * a reservation leaves on hand as it is, so bounding what set and adjust put there bounds everything.
 */
export const MAX_UNITS = 1_000_000_000;

/** A quantity a reservation line may carry: a whole number of units, 1 to MAX_UNITS. */
const isUnitCount = (quantity: number): boolean => Number.isInteger(quantity) && quantity > 0 && quantity <= MAX_UNITS;

/** Units a reservation may still take: what is available, within the on-hand limit (a level set before the limit may exceed it). */
const reservable = ({ available, reserved }: Level): number => Math.max(0, Math.min(available, MAX_UNITS - reserved));

export const levelKey = (variantId: string, locationId: string): string => `${variantId}|${locationId}`;

export const initialState = (): Inventory => ({ locations: {}, levels: {} });

const levelOf = (state: Inventory, { variantId, locationId }: Pick<StockLine, 'variantId' | 'locationId'>): Level =>
  state.levels[levelKey(variantId, locationId)] ?? { available: 0, reserved: 0 };

const withLevels = (state: Inventory, lines: StockLine[], change: (level: Level, quantity: number) => Level): Inventory['levels'] => {
  const levels = { ...state.levels };
  for (const line of lines) {
    const key = levelKey(line.variantId, line.locationId);
    levels[key] = change(levels[key] ?? { available: 0, reserved: 0 }, line.quantity);
  }
  return levels;
};

export const evolve = (state: Inventory, event: InventoryEvent): Inventory => {
  switch (event.type) {
    case 'StockLocationCreated':
      return { ...state, locations: { ...state.locations, [event.data.locationId]: { name: event.data.name } } };
    case 'StockAdjusted': {
      const key = levelKey(event.data.variantId, event.data.locationId);
      return { ...state, levels: { ...state.levels, [key]: { ...levelOf(state, event.data), available: event.data.available } } };
    }
    case 'StockReserved':
      return {
        ...state,
        levels: withLevels(state, event.data.lines, (l, q) => ({ available: l.available - q, reserved: l.reserved + q })),
      };
    case 'StockReservationRefused':
      return state;
    case 'StockReleased':
      return {
        ...state,
        levels: withLevels(state, event.data.lines, (l, q) => ({ available: l.available + q, reserved: l.reserved - q })),
      };
    case 'StockShipped':
      return { ...state, levels: withLevels(state, event.data.lines, (l, q) => ({ available: l.available, reserved: l.reserved - q })) };
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type CreateStockLocation = Command<'CreateStockLocation', StockLocationCreated['data']>;
export type SetStockLevel = Command<'SetStockLevel', { inventoryId: string; variantId: string; locationId: string; available: number }>;
export type AdjustStockLevel = Command<'AdjustStockLevel', { inventoryId: string; variantId: string; locationId: string; delta: number }>;
export type ReserveStock = Command<'ReserveStock', StockReserved['data']>;
/** The lines are the order's reservation, which its state machine ends once (consumers/order-fulfilment-route.ts). */
export type ReleaseStock = Command<'ReleaseStock', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;
export type ShipStock = Command<'ShipStock', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;

export type InventoryCommand = CreateStockLocation | SetStockLevel | AdjustStockLevel | ReserveStock | ReleaseStock | ShipStock;

// ── Decide ──────────────────────────────────────────────────────────────────
const knownLocation = (state: Inventory, locationId: string) => {
  if (!state.locations[locationId]) throw new NotFoundError(`stock location ${locationId} not found`);
};

const createLocation = ({ data }: CreateStockLocation, state: Inventory): InventoryEvent[] => {
  if (state.locations[data.locationId]) throw new ConflictError(`stock location ${data.locationId} already exists`);
  return [{ type: 'StockLocationCreated', data }];
};

const adjusted = (
  data: AdjustStockLevel['data'],
  state: Inventory,
  reason: 'set' | 'adjust',
  field: 'available' | 'delta',
): InventoryEvent[] => {
  knownLocation(state, data.locationId);
  const path = `body.${field}`;
  if (!Number.isSafeInteger(data.delta))
    throw new ValidationError('stock quantities are whole numbers of units', [{ path, message: 'must be an integer' }]);
  const level = levelOf(state, data);
  const available = level.available + data.delta;
  if (available < 0) {
    throw new ConflictError(`available stock cannot go below zero`, [{ path: 'body.delta', message: `only ${level.available} available` }]);
  }
  if (available > MAX_UNITS)
    throw new ValidationError(`available stock cannot exceed ${MAX_UNITS}`, [{ path: 'body', message: `would be ${available}` }]);
  // Only a rise is refused: a level above the limit (set before it existed) may still come down.
  if (data.delta > 0 && available + level.reserved > MAX_UNITS) {
    const room = Math.max(0, MAX_UNITS - level.reserved);
    throw new ConflictError(`on-hand stock (available + reserved) cannot exceed ${MAX_UNITS}`, [
      { path, message: `${level.reserved} reserved, so at most ${room} available` },
    ]);
  }
  if (data.delta === 0) return [];
  return [{ type: 'StockAdjusted', data: { ...data, available, reason } }];
};

const setLevel = ({ data }: SetStockLevel, state: Inventory): InventoryEvent[] => {
  const { available, ...where } = data;
  return adjusted({ ...where, delta: available - levelOf(state, data).available }, state, 'set', 'available');
};

type RefusalReason = 'unknown_location' | 'invalid_quantity' | 'insufficient_stock' | 'stock_limit';

/**
 * Lines of one variant at one location are summed: two lines of 3 need 6 available. The order
 * pipeline sends one ReserveStock per placed order, exactly once (a transactional router).
 * A refusal's `available` is what the level could still reserve; `requested` sums lines of at most
 * MAX_UNITS up to the first one refused, so it stays below 2 × MAX_UNITS, inside an Avro int.
 */
const reserve = ({ data }: ReserveStock, state: Inventory): InventoryEvent[] => {
  const needed = new Map<string, number>();
  for (const line of data.lines) {
    const key = levelKey(line.variantId, line.locationId);
    const valid = isUnitCount(line.quantity);
    const total = (needed.get(key) ?? 0) + (valid ? line.quantity : 0);
    needed.set(key, total);
    const known = Boolean(state.locations[line.locationId]);
    const level = levelOf(state, line);
    const units = known ? reservable(level) : 0;
    const reason: RefusalReason | undefined = !known
      ? 'unknown_location'
      : !valid
        ? 'invalid_quantity'
        : total > level.available
          ? 'insufficient_stock'
          : total > units
            ? 'stock_limit'
            : undefined;
    if (reason) {
      const { inventoryId, orderId } = data;
      const { lineIndex, variantId, locationId } = line;
      const ahead = data.reservedAhead ? { reservedAhead: true } : {};
      return [
        {
          type: 'StockReservationRefused',
          data: { inventoryId, orderId, lineIndex, variantId, locationId, requested: total, available: units, reason, ...ahead },
        },
      ];
    }
  }
  return [{ type: 'StockReserved', data }];
};

/** Releasing or shipping ends a reservation: its units leave `reserved` (back to `available`, or out of stock). */
const endReservation = (type: 'StockReleased' | 'StockShipped', { data }: ReleaseStock | ShipStock): InventoryEvent[] => {
  // The lines are a reservation this decider accepted; anything else is not one and must not reach the log.
  const invalid = data.lines.find((line) => !isUnitCount(line.quantity));
  if (invalid)
    throw new ValidationError(`line ${invalid.lineIndex} holds no reservable quantity`, [
      { path: `lines.${invalid.lineIndex}.quantity`, message: `must be 1..${MAX_UNITS}` },
    ]);
  return data.lines.length > 0 ? [{ type, data }] : [];
};

export const decide = (command: InventoryCommand, state: Inventory): InventoryEvent[] => {
  switch (command.type) {
    case 'CreateStockLocation':
      return createLocation(command, state);
    case 'SetStockLevel':
      return setLevel(command, state);
    case 'AdjustStockLevel':
      return adjusted(command.data, state, 'adjust', 'delta');
    case 'ReserveStock':
      return reserve(command, state);
    case 'ReleaseStock':
      return endReservation('StockReleased', command);
    case 'ShipStock':
      return endReservation('StockShipped', command);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const inventoryDecider: Decider<InventoryCommand, InventoryEvent, Inventory> = { initialState, evolve, decide };

/** One per tenant and org: all its stock levels, so a multi-line reservation is one decision. */
export const inventoryAggregate = defineAggregate({
  name: 'inventory',
  stream: 'oms.inventory',
  decider: inventoryDecider,
  id: 'inventoryId',
  events: {
    namespace: 'commerce.ledger.inventory',
    types: ['StockLocationCreated', 'StockAdjusted', 'StockReserved', 'StockReservationRefused', 'StockReleased', 'StockShipped'],
  },
});
