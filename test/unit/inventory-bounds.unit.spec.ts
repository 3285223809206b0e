import { describe, expect, it } from 'vitest';
import {
  evolve,
  initialState,
  inventoryDecider,
  levelKey,
  MAX_UNITS,
  type InventoryCommand,
  type InventoryEvent,
  type ReservationLine,
} from '../../commands/oms/inventory.ts';
import { ConflictError, ValidationError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(inventoryDecider);

const inventoryId = 'i1';
const INT_MAX = 2 ** 31 - 1;

const state = (...events: InventoryEvent[]) => events.reduce(evolve, initialState());

const where = { variantId: 'v1', locationId: 'l1' };
const at = { inventoryId, ...where };
const location: InventoryEvent = { type: 'StockLocationCreated', data: { inventoryId, locationId: 'l1', name: 'Main' } };
const stock = (available: number, delta = available): InventoryEvent => ({
  type: 'StockAdjusted',
  data: { ...at, delta, available, reason: 'set' },
});
const set = (available: number): WithoutMetadata<InventoryCommand> => ({ type: 'SetStockLevel', data: { ...at, available } });
const adjust = (delta: number): WithoutMetadata<InventoryCommand> => ({ type: 'AdjustStockLevel', data: { ...at, delta } });
const linesOf = (count: number, quantity: number): ReservationLine[] =>
  Array.from({ length: count }, (_, lineIndex) => ({ lineIndex, ...where, quantity }));
const reserve = (orderId: string, lines: ReservationLine[]): WithoutMetadata<InventoryCommand> => ({
  type: 'ReserveStock',
  data: { inventoryId, orderId, lines },
});
const reserved = (orderId: string, lines: ReservationLine[]): InventoryEvent => ({
  type: 'StockReserved',
  data: { inventoryId, orderId, lines },
});
/** The tester's order: 250 lines of 1 000 000 units of one variant at one location. */
const bigOrder = linesOf(250, 1_000_000);

/** Every level's parts and their sum within MAX_UNITS, so within the read model's integer columns. */
const expectWithinBounds = (events: InventoryEvent[]) => {
  for (const { available, reserved: held } of Object.values(state(...events).levels)) {
    expect(available).toBeGreaterThanOrEqual(0);
    expect(held).toBeGreaterThanOrEqual(0);
    expect(available + held).toBeLessThanOrEqual(MAX_UNITS);
  }
};

describe('inventory decider bounds', () => {
  it('keeps on hand (available + reserved) at most MAX_UNITS: a set or adjustment that raises it past is refused', () => {
    const held = [location, stock(MAX_UNITS), reserved('o1', bigOrder)];
    expect(state(...held).levels[levelKey('v1', 'l1')]).toEqual({ available: 750_000_000, reserved: 250_000_000 });

    given(held)
      .when(set(MAX_UNITS))
      .thenThrows(ConflictError, (error) =>
        expect(error.details).toEqual([{ path: 'body.available', message: '250000000 reserved, so at most 750000000 available' }]),
      );
    given(held)
      .when(adjust(1))
      .thenThrows(Error, (error) =>
        expect(error).toEqual(
          expect.objectContaining({ details: [{ path: 'body.delta', message: '250000000 reserved, so at most 750000000 available' }] }),
        ),
      );

    given(held)
      .when(adjust(-1))
      .then([{ type: 'StockAdjusted', data: { ...at, delta: -1, available: 749_999_999, reason: 'adjust' } }]);
    given([...held, stock(0, -750_000_000)])
      .when(set(750_000_000))
      .then([stock(750_000_000)]);
  });

  it('refuses quantities that are not whole numbers of units', () => {
    for (const command of [set(1.5), adjust(0.5), set(Number.NaN), adjust(Number.POSITIVE_INFINITY)]) {
      given([location]).when(command).thenThrows(ValidationError);
    }
  });

  it("the tester's scenario: orders of 250 × 1 000 000 units against 10^9 available, re-stocking in between, never take reserved past the bound", () => {
    const events: InventoryEvent[] = [location];
    const outcomes: string[] = [];
    const attempt = (command: WithoutMetadata<InventoryCommand>) => {
      try {
        const decided = given(events).when(command).events();
        events.push(...decided);
        outcomes.push(decided[0]?.type ?? 'nothing');
      } catch (error) {
        outcomes.push((error as Error).name);
      }
    };
    // Before the bound, the ninth round took reserved to 2.25 × 10^9, past a 32-bit integer.
    for (let round = 1; round <= 9; round++) {
      attempt(set(MAX_UNITS));
      attempt(reserve(`o${round}`, bigOrder));
    }
    expect(outcomes).toEqual([
      'StockAdjusted',
      'StockReserved',
      ...Array.from({ length: 3 }, () => ['ConflictError', 'StockReserved']).flat(),
      ...Array.from({ length: 5 }, () => ['ConflictError', 'StockReservationRefused']).flat(),
    ]);
    expect(state(...events).levels[levelKey('v1', 'l1')]).toEqual({ available: 0, reserved: MAX_UNITS });
    expect(events.at(-1)).toEqual({
      type: 'StockReservationRefused',
      data: { inventoryId, orderId: 'o9', lineIndex: 0, ...where, requested: 1_000_000, available: 0, reason: 'insufficient_stock' },
    });
    expectWithinBounds(events);
  });

  it('refuses a reservation past the bound on a level written before the bound existed, and lets that level come down', () => {
    // What the earlier decider accepted: 10^9 reserved, then available set again.
    const legacy = [location, stock(MAX_UNITS), reserved('o1', linesOf(1, MAX_UNITS)), stock(600_000_000)];
    given(legacy)
      .when(reserve('o2', linesOf(1, 1)))
      .then([
        {
          type: 'StockReservationRefused',
          data: { inventoryId, orderId: 'o2', lineIndex: 0, ...where, requested: 1, available: 0, reason: 'stock_limit' },
        },
      ]);
    given(legacy).when(adjust(1)).thenThrows(ConflictError);
    given(legacy)
      .when(adjust(-600_000_000))
      .then([{ type: 'StockAdjusted', data: { ...at, delta: -600_000_000, available: 0, reason: 'adjust' } }]);
  });

  it('refuses a reservation line whose quantity is not 1..MAX_UNITS whole units, whatever sent it', () => {
    for (const quantity of [0, -1, 1.5, MAX_UNITS + 1, Number.NaN]) {
      const lines = [...linesOf(1, 1), { lineIndex: 1, ...where, quantity }];
      given([location, stock(10)])
        .when(reserve('o1', lines))
        .then([
          {
            type: 'StockReservationRefused',
            data: { inventoryId, orderId: 'o1', lineIndex: 1, ...where, requested: 1, available: 10, reason: 'invalid_quantity' },
          },
        ]);
    }
  });

  it('reports a refused request within an Avro int however large the lines', () => {
    const [refused] = given([location, stock(MAX_UNITS)])
      .when(reserve('o1', linesOf(3, MAX_UNITS)))
      .events();
    expect(refused).toMatchObject({
      type: 'StockReservationRefused',
      data: { lineIndex: 1, requested: 2 * MAX_UNITS, available: MAX_UNITS },
    });
    expect(2 * MAX_UNITS).toBeLessThanOrEqual(INT_MAX);
  });

  it('the largest reservation fits: MAX_UNITS reserved, released and shipped', () => {
    const all = linesOf(1, MAX_UNITS);
    const held = [location, stock(MAX_UNITS), reserved('o1', all)];
    given([location, stock(MAX_UNITS)])
      .when(reserve('o1', all))
      .then([reserved('o1', all)]);
    const released: InventoryEvent = { type: 'StockReleased', data: { inventoryId, orderId: 'o1', lines: all } };
    given(held)
      .when({ type: 'ReleaseStock', data: { inventoryId, orderId: 'o1', lines: all } })
      .then([released]);
    expectWithinBounds([...held, released]);
  });

  it('refuses to release or ship lines that no reservation could hold', () => {
    for (const type of ['ReleaseStock', 'ShipStock'] as const) {
      for (const quantity of [0, 1.5, MAX_UNITS + 1]) {
        given([location, stock(10)])
          .when({ type, data: { inventoryId, orderId: 'o1', lines: linesOf(1, quantity) } })
          .thenThrows(ValidationError);
      }
    }
  });
});
