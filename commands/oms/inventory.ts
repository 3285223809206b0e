import { v5 as uuidv5 } from 'uuid';
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
export type StockReserved = Event<'StockReserved', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;
export type StockReservationRefused = Event<
  'StockReservationRefused',
  { inventoryId: string; orderId: string; lineIndex: number; variantId: string; locationId: string; requested: number; available: number; reason: string }
>;
export type StockReleased = Event<'StockReleased', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;
export type StockShipped = Event<'StockShipped', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;

export type InventoryEvent = StockLocationCreated | StockAdjusted | StockReserved | StockReservationRefused | StockReleased | StockShipped;

// ── State ───────────────────────────────────────────────────────────────────
export type Level = { available: number; reserved: number };
export type Inventory = {
  locations: Record<string, { name: string }>;
  /** Keyed by `${variantId}|${locationId}`. */
  levels: Record<string, Level>;
  /**
   * The reservations still held, by order id. A released or shipped one leaves the state (which
   * stays bounded by the open orders), so it can be released or shipped at most once.
   */
  held: Record<string, ReservationLine[]>;
};

export const MAX_UNITS = 1_000_000_000;

export const levelKey = (variantId: string, locationId: string): string => `${variantId}|${locationId}`;

export const initialState = (): Inventory => ({ locations: {}, levels: {}, held: {} });

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

const endReservation = (state: Inventory, orderId: string, change: (level: Level, quantity: number) => Level): Inventory => {
  const lines = state.held[orderId];
  if (!lines) return state;
  const { [orderId]: _ended, ...held } = state.held;
  return { ...state, levels: withLevels(state, lines, change), held };
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
        held: { ...state.held, [event.data.orderId]: event.data.lines },
      };
    case 'StockReservationRefused':
      return state;
    case 'StockReleased':
      return endReservation(state, event.data.orderId, (l, q) => ({ available: l.available + q, reserved: l.reserved - q }));
    case 'StockShipped':
      return endReservation(state, event.data.orderId, (l, q) => ({ available: l.available, reserved: l.reserved - q }));
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
export type ReserveStock = Command<'ReserveStock', { inventoryId: string; orderId: string; lines: ReservationLine[] }>;
export type ReleaseStock = Command<'ReleaseStock', { inventoryId: string; orderId: string }>;
export type ShipStock = Command<'ShipStock', { inventoryId: string; orderId: string }>;

export type InventoryCommand = CreateStockLocation | SetStockLevel | AdjustStockLevel | ReserveStock | ReleaseStock | ShipStock;

// ── Decide ──────────────────────────────────────────────────────────────────
const knownLocation = (state: Inventory, locationId: string) => {
  if (!state.locations[locationId]) throw new NotFoundError(`stock location ${locationId} not found`);
};

const createLocation = ({ data }: CreateStockLocation, state: Inventory): InventoryEvent[] => {
  if (state.locations[data.locationId]) throw new ConflictError(`stock location ${data.locationId} already exists`);
  return [{ type: 'StockLocationCreated', data }];
};

const adjusted = (data: AdjustStockLevel['data'], state: Inventory, reason: 'set' | 'adjust'): InventoryEvent[] => {
  knownLocation(state, data.locationId);
  const available = levelOf(state, data).available + data.delta;
  if (available < 0) {
    throw new ConflictError(`available stock cannot go below zero`, [{ path: 'body.delta', message: `only ${available - data.delta} available` }]);
  }
  // Levels travel as Avro ints and Postgres integers.
  if (available > MAX_UNITS) throw new ValidationError(`available stock cannot exceed ${MAX_UNITS}`, [{ path: 'body', message: `would be ${available}` }]);
  if (data.delta === 0) return [];
  return [{ type: 'StockAdjusted', data: { ...data, available, reason } }];
};

const setLevel = ({ data }: SetStockLevel, state: Inventory): InventoryEvent[] => {
  const { available, ...where } = data;
  return adjusted({ ...where, delta: available - levelOf(state, data).available }, state, 'set');
};

/**
 * Lines of one variant at one location are summed: two lines of 3 need 6 available. The order
 * pipeline sends one ReserveStock per placed order (exactly once); a repeat while held is ignored.
 */
const reserve = ({ data }: ReserveStock, state: Inventory): InventoryEvent[] => {
  if (state.held[data.orderId]) return [];
  const needed = new Map<string, number>();
  for (const line of data.lines) {
    const key = levelKey(line.variantId, line.locationId);
    const total = (needed.get(key) ?? 0) + line.quantity;
    needed.set(key, total);
    const known = Boolean(state.locations[line.locationId]);
    const available = known ? levelOf(state, line).available : 0;
    if (!known || total > available) {
      const reason = known ? 'insufficient_stock' : 'unknown_location';
      const { inventoryId, orderId } = data;
      const { lineIndex, variantId, locationId } = line;
      return [{ type: 'StockReservationRefused', data: { inventoryId, orderId, lineIndex, variantId, locationId, requested: total, available, reason } }];
    }
  }
  return [{ type: 'StockReserved', data }];
};

/** Releasing or shipping ends a held reservation; for one that is not held there is nothing to do. */
const endHeld = (type: 'StockReleased' | 'StockShipped', { data }: ReleaseStock | ShipStock, state: Inventory): InventoryEvent[] => {
  const lines = state.held[data.orderId];
  return lines ? [{ type, data: { ...data, lines } }] : [];
};

export const decide = (command: InventoryCommand, state: Inventory): InventoryEvent[] => {
  switch (command.type) {
    case 'CreateStockLocation':
      return createLocation(command, state);
    case 'SetStockLevel':
      return setLevel(command, state);
    case 'AdjustStockLevel':
      return adjusted(command.data, state, 'adjust');
    case 'ReserveStock':
      return reserve(command, state);
    case 'ReleaseStock':
      return endHeld('StockReleased', command, state);
    case 'ShipStock':
      return endHeld('StockShipped', command, state);
    default: {
      const exhaustive: never = command;
      throw new Error(`unknown command ${JSON.stringify(exhaustive)}`);
    }
  }
};

export const inventoryDecider: Decider<InventoryCommand, InventoryEvent, Inventory> = { initialState, evolve, decide };
