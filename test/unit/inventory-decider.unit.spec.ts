import { describe, expect, it } from 'vitest';
import {
  evolve,
  initialState,
  inventoryDecider,
  levelKey,
  type InventoryCommand,
  type InventoryEvent,
} from '../../commands/oms/inventory.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(inventoryDecider);

const inventoryId = 'i1';

const state = (...events: InventoryEvent[]) => events.reduce(evolve, initialState());

const location: InventoryEvent = { type: 'StockLocationCreated', data: { inventoryId, locationId: 'l1', name: 'Main' } };
const stock = (variantId: string, available: number, delta = available): InventoryEvent => ({
  type: 'StockAdjusted',
  data: { inventoryId, variantId, locationId: 'l1', delta, available, reason: 'set' },
});
const lines = [
  { lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 2 },
  { lineIndex: 1, variantId: 'v2', locationId: 'l1', quantity: 3 },
];
const reserve = (orderId = 'o1', reserved = lines): WithoutMetadata<InventoryCommand> => ({
  type: 'ReserveStock',
  data: { inventoryId, orderId, lines: reserved },
});
const reserved: InventoryEvent = { type: 'StockReserved', data: { inventoryId, orderId: 'o1', lines } };
const stocked = [location, stock('v1', 5), stock('v2', 3)];

describe('inventory decider', () => {
  it('creates a location once', () => {
    given().when({ type: 'CreateStockLocation', data: location.data }).then([location]);
    given([location]).when({ type: 'CreateStockLocation', data: location.data }).thenThrows(ConflictError);
  });

  it('sets and adjusts available stock, never below zero, only at known locations', () => {
    const at = { inventoryId, variantId: 'v1', locationId: 'l1' };
    given([location])
      .when({ type: 'SetStockLevel', data: { ...at, available: 5 } })
      .then([stock('v1', 5)]);
    given([location, stock('v1', 5)])
      .when({ type: 'SetStockLevel', data: { ...at, available: 2 } })
      .then([{ type: 'StockAdjusted', data: { ...at, delta: -3, available: 2, reason: 'set' } }]);
    given([location, stock('v1', 5)])
      .when({ type: 'SetStockLevel', data: { ...at, available: 5 } })
      .thenNothingHappened();
    given([location, stock('v1', 5)])
      .when({ type: 'AdjustStockLevel', data: { ...at, delta: -5 } })
      .then([{ type: 'StockAdjusted', data: { ...at, delta: -5, available: 0, reason: 'adjust' } }]);
    given([location, stock('v1', 5)])
      .when({ type: 'AdjustStockLevel', data: { ...at, delta: -6 } })
      .thenThrows(ConflictError);
    given([location, stock('v1', 5)])
      .when({ type: 'AdjustStockLevel', data: { ...at, delta: 1_000_000_000 } })
      .thenThrows(ValidationError);
    given()
      .when({ type: 'SetStockLevel', data: { ...at, available: 1 } })
      .thenThrows(NotFoundError);
    given()
      .when({ type: 'AdjustStockLevel', data: { ...at, delta: 1 } })
      .thenThrows(NotFoundError);
  });

  it('reserves every line in one decision', () => {
    given(stocked).when(reserve()).then([reserved]);
    expect(state(...stocked, reserved).levels).toEqual({
      [levelKey('v1', 'l1')]: { available: 3, reserved: 2 },
      [levelKey('v2', 'l1')]: { available: 0, reserved: 3 },
    });
  });

  it('refuses the whole reservation, naming the first short line, and changes nothing', () => {
    const events = given([location, stock('v1', 5), stock('v2', 2)])
      .when(reserve())
      .events();
    expect(events).toEqual([
      {
        type: 'StockReservationRefused',
        data: {
          inventoryId,
          orderId: 'o1',
          lineIndex: 1,
          variantId: 'v2',
          locationId: 'l1',
          requested: 3,
          available: 2,
          reason: 'insufficient_stock',
        },
      },
    ]);
    expect(state(location, stock('v1', 5), stock('v2', 2), ...events)).toEqual(state(location, stock('v1', 5), stock('v2', 2)));
  });

  it('sums lines of the same variant and location', () => {
    const twice = [
      { lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 3 },
      { lineIndex: 1, variantId: 'v1', locationId: 'l1', quantity: 3 },
    ];
    expect(given(stocked).when(reserve('o1', twice)).events()[0]).toMatchObject({
      type: 'StockReservationRefused',
      data: { lineIndex: 1, requested: 6, available: 5 },
    });
  });

  it('reserves ahead of an order, and refuses ahead of one, saying so in the event', () => {
    const ahead = { type: 'ReserveStock' as const, data: { inventoryId, orderId: 'o9', lines, reservedAhead: true } };
    given(stocked)
      .when(ahead)
      .then([{ type: 'StockReserved', data: { inventoryId, orderId: 'o9', lines, reservedAhead: true } }]);
    expect(
      given([location, stock('v1', 5), stock('v2', 2)])
        .when(ahead)
        .events(),
    ).toEqual([
      {
        type: 'StockReservationRefused',
        data: {
          inventoryId,
          orderId: 'o9',
          lineIndex: 1,
          variantId: 'v2',
          locationId: 'l1',
          requested: 3,
          available: 2,
          reason: 'insufficient_stock',
          reservedAhead: true,
        },
      },
    ]);
  });

  it('refuses a line at an unknown location', () => {
    const elsewhere = [{ lineIndex: 0, variantId: 'v1', locationId: 'l9', quantity: 1 }];
    expect(given(stocked).when(reserve('o1', elsewhere)).events()[0]).toMatchObject({
      type: 'StockReservationRefused',
      data: { reason: 'unknown_location', lineIndex: 0 },
    });
  });

  it('releases the lines the order pipeline names: available back up, reserved down', () => {
    const released: InventoryEvent = { type: 'StockReleased', data: { inventoryId, orderId: 'o1', lines } };
    given([...stocked, reserved])
      .when({ type: 'ReleaseStock', data: { inventoryId, orderId: 'o1', lines } })
      .then([released]);
    expect(state(...stocked, reserved, released).levels).toEqual(state(...stocked).levels);
    // An order without inventory-backed lines holds nothing to release.
    given(stocked)
      .when({ type: 'ReleaseStock', data: { inventoryId, orderId: 'o2', lines: [] } })
      .thenNothingHappened();
  });

  it('ships the lines the order pipeline names: reserved and on hand go down', () => {
    const shipped: InventoryEvent = { type: 'StockShipped', data: { inventoryId, orderId: 'o1', lines } };
    given([...stocked, reserved])
      .when({ type: 'ShipStock', data: { inventoryId, orderId: 'o1', lines } })
      .then([shipped]);
    expect(state(...stocked, reserved, shipped).levels[levelKey('v1', 'l1')]).toEqual({ available: 3, reserved: 0 });
  });

  it('keeps only locations and levels, however many orders hold stock', () => {
    const many = Array.from({ length: 50 }, (_, i): InventoryEvent => ({
      type: 'StockReserved',
      data: { inventoryId, orderId: `o${i}`, lines: [{ lineIndex: 0, variantId: 'v1', locationId: 'l1', quantity: 0 }] },
    }));
    expect(Object.keys(state(...stocked, ...many))).toEqual(['locations', 'levels']);
  });
});
