import { describe, expect, it } from 'vitest';
import { decide, evolve, initialState, type BrandCommand, type BrandEvent } from '../../commands/catalog/brand.ts';
import { ConflictError } from '../../ledger/errors.ts';
import { metadata } from '../support/command-metadata.ts';

const data = { brandId: 'b1', name: 'Acme', description: null, logoUrl: 'https://cdn.example.com/acme.png' };
const create: BrandCommand = { type: 'CreateBrand', data, metadata };

describe('brand decider', () => {
  it('creates a brand', () => {
    expect(decide(create, initialState())).toEqual([{ type: 'BrandCreated', data }]);
  });

  it('refuses to create the same brand twice', () => {
    const events: BrandEvent[] = [{ type: 'BrandCreated', data }];
    expect(() => decide(create, events.reduce(evolve, initialState()))).toThrow(ConflictError);
  });
});
