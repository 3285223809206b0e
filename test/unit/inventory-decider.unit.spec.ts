import { describe, expect, it } from 'vitest';
import { decide, evolve, initialState, levelKey, type InventoryCommand, type InventoryEvent } from '../../commands/oms/inventory.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';

const inventoryId = 'i1';

const state = (...events: InventoryEvent[]) => events.reduce(evolve, initialState());
const given = (...events: InventoryEvent[]) => ({
  when: (command: Omit<InventoryCommand, 'metadata'>) => () => decide({ ...command, metadata } as InventoryCommand, state(...events)),
});

const location: InventoryEvent = { type: 'StockLocationCreated', data: { inventoryId, locationId: 'l1', name: 'Main' } };
const stock = (variantId: string, available: number, delta = available): InventoryEvent => ({
  type: 'StockAdjusted',
  data: { inventoryId, variantId, locationId: 'l1', delta, available, reason: 'set' },
});
const lines = [
  { lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 2 },
  { lineIndex: 1, variantId: 'v2', locationId: 'l1', quantity: 3 },
];
const reserve = (orderId = 'o1', reserved = lines): Omit<InventoryCommand, 'metadata'> => ({ type: 'ReserveStock', data: { inventoryId, orderId, lines: reserved } });
const reserved: InventoryEvent = { type: 'StockReserved', data: { inventoryId, orderId: 'o1', lines } };
const stocked = [location, stock('v1', 5), stock('v2', 3)];

describe('inventory decider', () => {
  it('creates a location once', () => {
    expect(given().when({ type: 'CreateStockLocation', data: location.data })()).toEqual([location]);
    expect(given(location).when({ type: 'CreateStockLocation', data: location.data })).toThrow(ConflictError);
  });

  it('sets and adjusts available stock, never below zero, only at known locations', () => {
    const at = { inventoryId, variantId: 'v1', locationId: 'l1' };
    expect(given(location).when({ type: 'SetStockLevel', data: { ...at, available: 5 } })()).toEqual([stock('v1', 5)]);
    expect(given(location, stock('v1', 5)).when({ type: 'SetStockLevel', data: { ...at, available: 2 } })()).toEqual([
      { type: 'StockAdjusted', data: { ...at, delta: -3, available: 2, reason: 'set' } },
    ]);
    expect(given(location, stock('v1', 5)).when({ type: 'SetStockLevel', data: { ...at, available: 5 } })()).toEqual([]);
    expect(given(location, stock('v1', 5)).when({ type: 'AdjustStockLevel', data: { ...at, delta: -5 } })()).toEqual([
      { type: 'StockAdjusted', data: { ...at, delta: -5, available: 0, reason: 'adjust' } },
    ]);
    expect(given(location, stock('v1', 5)).when({ type: 'AdjustStockLevel', data: { ...at, delta: -6 } })).toThrow(ConflictError);
    expect(given(location, stock('v1', 5)).when({ type: 'AdjustStockLevel', data: { ...at, delta: 1_000_000_000 } })).toThrow(ValidationError);
    expect(given().when({ type: 'SetStockLevel', data: { ...at, available: 1 } })).toThrow(NotFoundError);
    expect(given().when({ type: 'AdjustStockLevel', data: { ...at, delta: 1 } })).toThrow(NotFoundError);
  });

  it('reserves every line in one decision', () => {
    expect(given(...stocked).when(reserve())()).toEqual([reserved]);
    expect(state(...stocked, reserved).levels).toEqual({ [levelKey('v1', 'l1')]: { available: 3, reserved: 2 }, [levelKey('v2', 'l1')]: { available: 0, reserved: 3 } });
  });

  it('refuses the whole reservation, naming the first short line, and changes nothing', () => {
    const events = given(location, stock('v1', 5), stock('v2', 2)).when(reserve())();
    expect(events).toEqual([
      { type: 'StockReservationRefused', data: { inventoryId, orderId: 'o1', lineIndex: 1, variantId: 'v2', locationId: 'l1', requested: 3, available: 2, reason: 'insufficient_stock' } },
    ]);
    expect(state(location, stock('v1', 5), stock('v2', 2), ...events)).toEqual(state(location, stock('v1', 5), stock('v2', 2)));
  });

  it('sums lines of the same variant and location', () => {
    const twice = [
      { lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 3 },
      { lineIndex: 1, variantId: 'v1', locationId: 'l1', quantity: 3 },
    ];
    expect(given(...stocked).when(reserve('o1', twice))()[0]).toMatchObject({ type: 'StockReservationRefused', data: { lineIndex: 1, requested: 6, available: 5 } });
  });

  it('refuses a line at an unknown location', () => {
    const elsewhere = [{ lineIndex: 0, variantId: 'v1', locationId: 'l9', quantity: 1 }];
    expect(given(...stocked).when(reserve('o1', elsewhere))()[0]).toMatchObject({ type: 'StockReservationRefused', data: { reason: 'unknown_location', lineIndex: 0 } });
  });

  it('releases the lines the order pipeline names: available back up, reserved down', () => {
    const release: Omit<InventoryCommand, 'metadata'> = { type: 'ReleaseStock', data: { inventoryId, orderId: 'o1', lines } };
    const released: InventoryEvent = { type: 'StockReleased', data: { inventoryId, orderId: 'o1', lines } };
    expect(given(...stocked, reserved).when(release)()).toEqual([released]);
    expect(state(...stocked, reserved, released).levels).toEqual(state(...stocked).levels);
    // An order without inventory-backed lines holds nothing to release.
    expect(given(...stocked).when({ type: 'ReleaseStock', data: { inventoryId, orderId: 'o2', lines: [] } })()).toEqual([]);
  });

  it('ships the lines the order pipeline names: reserved and on hand go down', () => {
    const ship: Omit<InventoryCommand, 'metadata'> = { type: 'ShipStock', data: { inventoryId, orderId: 'o1', lines } };
    const shipped: InventoryEvent = { type: 'StockShipped', data: { inventoryId, orderId: 'o1', lines } };
    expect(given(...stocked, reserved).when(ship)()).toEqual([shipped]);
    expect(state(...stocked, reserved, shipped).levels[levelKey('v1', 'l1')]).toEqual({ available: 3, reserved: 0 });
  });

  it('keeps only locations and levels, however many orders hold stock', () => {
    const many = Array.from({ length: 50 }, (_, i): InventoryEvent => ({ type: 'StockReserved', data: { inventoryId, orderId: `o${i}`, lines: [{ lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 0 }] } }));
    expect(Object.keys(state(...stocked, ...many))).toEqual(['locations', 'levels']);
  });
});
