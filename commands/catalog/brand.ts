import { defineAggregate } from '../../ledger/aggregate.ts';
import { ConflictError } from '../../ledger/errors.ts';
import type { Command, Decider, Event } from '../../ledger/message.ts';

// ── Events ──────────────────────────────────────────────────────────────────
export type BrandCreated = Event<'BrandCreated', { brandId: string; name: string; description: string | null; logoUrl: string | null }>;
export type BrandEvent = BrandCreated;

// ── State ───────────────────────────────────────────────────────────────────
export type Brand = { status: 'Empty' } | { status: 'Existing'; name: string };

export const initialState = (): Brand => ({ status: 'Empty' });

export const evolve = (_state: Brand, event: BrandEvent): Brand => {
  switch (event.type) {
    case 'BrandCreated':
      return { status: 'Existing', name: event.data.name };
    default: {
      const exhaustive: never = event.type;
      return exhaustive;
    }
  }
};

// ── Commands ────────────────────────────────────────────────────────────────
export type CreateBrand = Command<'CreateBrand', BrandCreated['data']>;
export type BrandCommand = CreateBrand;

// ── Decide ──────────────────────────────────────────────────────────────────
const create = ({ data }: CreateBrand, state: Brand): BrandEvent[] => {
  if (state.status !== 'Empty') throw new ConflictError(`brand ${data.brandId} already exists`);
  return [{ type: 'BrandCreated', data }];
};

export const decide = (command: BrandCommand, state: Brand): BrandEvent[] => {
  switch (command.type) {
    case 'CreateBrand':
      return create(command, state);
    default: {
      const exhaustive: never = command.type;
      throw new Error(`unknown command ${String(exhaustive)}`);
    }
  }
};

export const brandDecider: Decider<BrandCommand, BrandEvent, Brand> = { initialState, evolve, decide };

export const brandAggregate = defineAggregate({
  name: 'brand',
  stream: 'catalog.brand',
  decider: brandDecider,
  id: 'brandId',
  events: { namespace: 'commerce.ledger.catalog', types: ['BrandCreated'] },
});
