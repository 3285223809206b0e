import { describe, it } from 'vitest';
import { brandDecider, type BrandCommand } from '../../commands/catalog/brand.ts';
import { ConflictError } from '../../ledger/errors.ts';
import { DeciderSpecification, type WithoutMetadata } from '../support/decider-specification.ts';

const given = DeciderSpecification.for(brandDecider);

const data = { brandId: 'b1', name: 'Acme', description: null, logoUrl: 'https://cdn.example.com/acme.png' };
const create: WithoutMetadata<BrandCommand> = { type: 'CreateBrand', data };

describe('brand decider', () => {
  it('creates a brand', () => {
    given()
      .when(create)
      .then([{ type: 'BrandCreated', data }]);
  });

  it('refuses to create the same brand twice', () => {
    given([{ type: 'BrandCreated', data }])
      .when(create)
      .thenThrows(ConflictError);
  });
});
